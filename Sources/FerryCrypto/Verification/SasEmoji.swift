/// One of the 64 pictures a short authentication string is shown as, with the English name the
/// specification gives it, so that two people can also read the string aloud to each other.
public struct SasEmoji: Sendable, Hashable {
    /// Its place in the table, 0 to 63: what six bits of the SAS select.
    public let number: Int
    /// The emoji itself (some carry U+FE0F so that they show as pictures, not as text).
    public let emoji: String
    /// Its English name, as the table has it.
    public let description: String

    /// The table, in the order the six bits index it. Copied from the specification's
    /// `data-definitions/sas-emoji.json` (matrix-org/matrix-spec): every client shows the same
    /// picture for the same number, so this is data to match, not to improve on. Some clients
    /// use older names (nio: "Wrench", "Thumbs up", "Airplane"); the pictures are the same.
    public static let table: [SasEmoji] = pictures.enumerated().map {
        SasEmoji(number: $0.offset, emoji: $0.element.0, description: $0.element.1)
    }

    private static let pictures: [(String, String)] = [
        ("🐶", "Dog"), ("🐱", "Cat"), ("🦁", "Lion"), ("🐎", "Horse"),
        ("🦄", "Unicorn"), ("🐷", "Pig"), ("🐘", "Elephant"), ("🐰", "Rabbit"),
        ("🐼", "Panda"), ("🐓", "Rooster"), ("🐧", "Penguin"), ("🐢", "Turtle"),
        ("🐟", "Fish"), ("🐙", "Octopus"), ("🦋", "Butterfly"), ("🌷", "Flower"),
        ("🌳", "Tree"), ("🌵", "Cactus"), ("🍄", "Mushroom"), ("🌏", "Globe"),
        ("🌙", "Moon"), ("☁️", "Cloud"), ("🔥", "Fire"), ("🍌", "Banana"),
        ("🍎", "Apple"), ("🍓", "Strawberry"), ("🌽", "Corn"), ("🍕", "Pizza"),
        ("🎂", "Cake"), ("❤️", "Heart"), ("😀", "Smiley"), ("🤖", "Robot"),
        ("🎩", "Hat"), ("👓", "Glasses"), ("🔧", "Spanner"), ("🎅", "Santa"),
        ("👍", "Thumbs Up"), ("☂️", "Umbrella"), ("⌛", "Hourglass"), ("⏰", "Clock"),
        ("🎁", "Gift"), ("💡", "Light Bulb"), ("📕", "Book"), ("✏️", "Pencil"),
        ("📎", "Paperclip"), ("✂️", "Scissors"), ("🔒", "Lock"), ("🔑", "Key"),
        ("🔨", "Hammer"), ("☎️", "Telephone"), ("🏁", "Flag"), ("🚂", "Train"),
        ("🚲", "Bicycle"), ("✈️", "Aeroplane"), ("🚀", "Rocket"), ("🏆", "Trophy"),
        ("⚽", "Ball"), ("🎸", "Guitar"), ("🎺", "Trumpet"), ("🔔", "Bell"),
        ("⚓", "Anchor"), ("🎧", "Headphones"), ("📁", "Folder"), ("📌", "Pin"),
    ]
}

import FerryCore

/// One of the 64 pictures a short authentication string is shown as, with the English name the
/// specification gives it, so that two people can also read the string aloud to each other.
public struct SasEmoji: Sendable, Hashable {
    /// Its place in the table, 0 to 63: what six bits of the SAS select.
    public let number: Int
    /// The emoji itself (some carry U+FE0F so that they show as pictures, not as text).
    public let emoji: String
    /// Its English name, as the table has it (marked for translation: a person's screen shows
    /// `Translation.text(dynamic:)` of it).
    public let description: String

    /// The table, in the order the six bits index it. Copied from the specification's
    /// `data-definitions/sas-emoji.json` (matrix-org/matrix-spec): every client shows the same
    /// picture for the same number, so this is data to match, not to improve on. Some clients
    /// use older names (nio: "Wrench", "Thumbs up", "Airplane"); the pictures are the same.
    public static let table: [SasEmoji] = pictures.enumerated().map {
        SasEmoji(number: $0.offset, emoji: $0.element.0, description: $0.element.1.description)
    }

    private static let pictures: [(String, StaticString)] = [
        // TRANSLATORS: the names of the emoji two devices compare; the specification's sas-emoji.json gives each a
        // translation, which other clients show: use the same words where you can.
        ("🐶", trNoop("Dog")), ("🐱", trNoop("Cat")), ("🦁", trNoop("Lion")), ("🐎", trNoop("Horse")),
        ("🦄", trNoop("Unicorn")), ("🐷", trNoop("Pig")), ("🐘", trNoop("Elephant")), ("🐰", trNoop("Rabbit")),
        ("🐼", trNoop("Panda")), ("🐓", trNoop("Rooster")), ("🐧", trNoop("Penguin")), ("🐢", trNoop("Turtle")),
        ("🐟", trNoop("Fish")), ("🐙", trNoop("Octopus")), ("🦋", trNoop("Butterfly")), ("🌷", trNoop("Flower")),
        ("🌳", trNoop("Tree")), ("🌵", trNoop("Cactus")), ("🍄", trNoop("Mushroom")), ("🌏", trNoop("Globe")),
        ("🌙", trNoop("Moon")), ("☁️", trNoop("Cloud")), ("🔥", trNoop("Fire")), ("🍌", trNoop("Banana")),
        ("🍎", trNoop("Apple")), ("🍓", trNoop("Strawberry")), ("🌽", trNoop("Corn")), ("🍕", trNoop("Pizza")),
        ("🎂", trNoop("Cake")), ("❤️", trNoop("Heart")), ("😀", trNoop("Smiley")), ("🤖", trNoop("Robot")),
        ("🎩", trNoop("Hat")), ("👓", trNoop("Glasses")), ("🔧", trNoop("Spanner")), ("🎅", trNoop("Santa")),
        ("👍", trNoop("Thumbs Up")), ("☂️", trNoop("Umbrella")), ("⌛", trNoop("Hourglass")), ("⏰", trNoop("Clock")),
        ("🎁", trNoop("Gift")), ("💡", trNoop("Light Bulb")), ("📕", trNoop("Book")), ("✏️", trNoop("Pencil")),
        ("📎", trNoop("Paperclip")), ("✂️", trNoop("Scissors")), ("🔒", trNoop("Lock")), ("🔑", trNoop("Key")),
        ("🔨", trNoop("Hammer")), ("☎️", trNoop("Telephone")), ("🏁", trNoop("Flag")), ("🚂", trNoop("Train")),
        ("🚲", trNoop("Bicycle")), ("✈️", trNoop("Aeroplane")), ("🚀", trNoop("Rocket")), ("🏆", trNoop("Trophy")),
        ("⚽", trNoop("Ball")), ("🎸", trNoop("Guitar")), ("🎺", trNoop("Trumpet")), ("🔔", trNoop("Bell")),
        ("⚓", trNoop("Anchor")), ("🎧", trNoop("Headphones")), ("📁", trNoop("Folder")), ("📌", trNoop("Pin")),
    ]
}

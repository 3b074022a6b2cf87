import FerryContract
import FerryCore
import GLibAdapter
import GtkAdapter

/// Page 1, "Share to": a search field with focus, recent destinations and then the rest, several
/// can be ticked; encrypted rooms carry a lock.
@GLibMain final class SharePage {
    let root: Box
    let search: TextField
    private let service: ServiceClient
    private let pictures: AvatarPictures
    // TRANSLATORS: the heading above the rooms and people shared to lately.
    private let recentHeading = Label(trc("destinations heading", "Recent"), style: "heading")
    private let recentList = ListBox()
    private let allHeading = Label(tr("All rooms and people"), style: "heading")
    private let allList = ListBox()
    private let notice = Label("", style: "dim-label", alignment: 0.5)
    /// Shows only when a listing takes a while (DelayedSpinner).
    private let spinner = DelayedSpinner()
    private var generation = 0
    private var shown: [DestinationListing] = []
    /// The account the share was made for (`ferry send --account`), if any: only its rooms are listed.
    var account: String?
    /// The list holds several accounts' rooms: each row says whose it is.
    private(set) var showsAccounts = false

    /// The ticked destinations, in the order they were ticked; kept while the search changes.
    private(set) var chosen: [DestinationListing] = []
    /// Destinations a link suggested (room ids, aliases, user ids), ticked when the list first shows
    /// them: a preselection the person sees and confirms with Send, never a send by itself.
    var suggested: [String] = []
    /// Called when the choice changes (to enable "Next").
    var onChoiceChanged: () -> Void = {}
    /// Called when listing needs a sign-in first (NotSignedIn).
    var onNeedsSignIn: () -> Void = {}

    init(service: ServiceClient) {
        self.service = service
        pictures = AvatarPictures(service: service)
        search = TextField(.search, placeholder: tr("Search rooms and people"))
        search.accessibleName = tr("Search rooms and people")
        search.expandsHorizontally = true
        recentList.accessibleName = tr("Recent destinations")
        allList.accessibleName = tr("All destinations")
        notice.isVisible = false

        let column = Box(
            .vertical, spacing: 12, [search, spinner.root, notice, recentHeading, recentList, allHeading, allList])
        column.setMargins(top: 12, bottom: 18, start: 12, end: 12)
        root = Box(.vertical)
        let scroller = ScrolledWindow(Clamp(column, maximumWidth: 600))
        scroller.expandsVertically = true
        root.append(scroller)

        search.onChange { [weak self] in self?.reload() }
        // Enter in the search field ticks the first destination that can be picked.
        search.onActivate { [weak self] in
            guard let self, let first = self.shown.first else { return }
            if !self.chosen.contains(where: { $0.isSame(as: first) }) { self.toggle(first) }
        }
    }

    /// Lists destinations for the current search text; a newer search wins over a slower older one.
    func reload() {
        generation += 1
        let current = generation
        let query = search.text.trimmingWhitespace()
        spinner.isBusy = shown.isEmpty
        service.destinations(matching: query, limit: query.isEmpty ? 200 : 50) { [weak self] result in
            guard let self, current == self.generation else { return }
            self.spinner.isBusy = false
            switch result {
            case .success(let options):
                let own = self.account.map { own in options.filter { $0.account == nil || $0.account == own } }
                self.show(own ?? options, query: query)
            case .failure(let error):
                if error.ferryName == "NotSignedIn" { self.onNeedsSignIn(); return }
                self.show([], query: query)
                // TRANSLATORS: {reason} is a sentence saying why.
                self.showNotice(tr("Cannot list your rooms: {reason}", ["reason": error.sentence]))
            }
        }
    }

    private func show(_ options: [DestinationListing], query: String) {
        shown = options
        if !suggested.isEmpty, query.isEmpty {
            // A room two accounts have joined is ticked once, as the account listed first.
            var ticked: Set<String> = Set(chosen.map(\.id))
            for option in options
            where !ticked.contains(option.id)
                && suggested.contains(where: { [option.id, option.alias, option.userID].contains($0) })
            {
                chosen.append(option)
                ticked.insert(option.id)
            }
            suggested = []
            onChoiceChanged()
        }
        recentList.removeAll()
        allList.removeAll()
        // Several accounts' rooms: each row says whose it is.
        showsAccounts = Set(options.compactMap(\.account)).count > 1
        let recent = options.filter(\.recent)
        let rest = options.filter { !$0.recent }
        recent.forEach { recentList.append(row(for: $0)) }
        rest.forEach { allList.append(row(for: $0)) }
        recentHeading.isVisible = !recent.isEmpty
        recentList.isVisible = !recent.isEmpty
        allHeading.text =
            recent.isEmpty && !query.isEmpty
            // TRANSLATORS: "Results" heads the rooms and people that match what was searched for.
            ? tr("Results")
            : (recent.isEmpty ? tr("Rooms and people") : tr("All rooms and people"))
        allHeading.isVisible = !rest.isEmpty
        allList.isVisible = !rest.isEmpty
        if options.isEmpty, query.isEmpty {
            showNotice(tr("You are in no rooms yet."))
        } else if options.isEmpty {
            // TRANSLATORS: {query} is what was typed into the search field.
            showNotice(tr("No rooms or people match “{query}”.", ["query": SafeDisplay.escaped(query)]))
        } else {
            notice.isVisible = false
        }
    }

    private func showNotice(_ text: String) {
        notice.text = text
        notice.accessibleName = text
        notice.isVisible = true
    }

    private func row(for option: DestinationListing) -> Row {
        let name = SafeDisplay.escaped(option.displayName)
        let detail = option.detail(showingAccount: showsAccounts)
        let row = Row(title: name, subtitle: SafeDisplay.escaped(detail))
        let avatar = Avatar(name: option.displayName, size: 32)
        row.addPrefix(avatar)
        if let picture = option.avatar { pictures.show(picture, as: option.account, on: avatar) }
        if option.encrypted {
            // A lock beside the name: what is shared there is end-to-end encrypted.
            let lock = Icon(name: "channel-secure-symbolic")
            lock.accessibleName = tr("End-to-end encrypted")
            lock.tooltip = tr("End-to-end encrypted")
            row.addSuffix(lock)
        }
        let check = CheckButton()
        if showsAccounts, let account = option.account {
            // A room two accounts have joined is listed once for each: the name says which.
            check.accessibleName = tr(
                // TRANSLATORS: the accessible name of the tick box that picks a room or person with several
                // accounts signed in; {name} is its name, {account} the Matrix user id it would be sent as.
                "Choose {name} as {account}", ["name": name, "account": SafeDisplay.escaped(account)])
        } else {
            // TRANSLATORS: the accessible name of the tick box that picks a room or person; {name} is its name.
            check.accessibleName = tr("Choose {name}", ["name": name])
        }
        check.isChecked = chosen.contains { $0.isSame(as: option) }
        check.verticalAlignment = .center
        check.onToggle { [weak self, weak check] in
            guard let self, let check else { return }
            let isChosen = self.chosen.contains { $0.isSame(as: option) }
            if check.isChecked != isChosen { self.toggle(option, from: check) }
        }
        row.addSuffix(check)
        row.activates(check)
        row.accessibleName = name
        row.setAccessibleDescription(detail)
        return row
    }

    private func toggle(_ option: DestinationListing, from check: CheckButton? = nil) {
        if let index = chosen.firstIndex(where: { $0.isSame(as: option) }) {
            chosen.remove(at: index)
        } else {
            chosen.append(option)
        }
        if check == nil { show(shown, query: search.text) } // reflect a tick made by Enter
        onChoiceChanged()
    }
}

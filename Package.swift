// swift-tools-version:6.2
// Ferry: share files, text and links from the Linux desktop into Matrix rooms.
// Module layout follows a share's path: intake → intent (core) → staging → outbox,
// with the GLib adapter as the only place that touches C, and the CLI as a client.
import PackageDescription

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "ferry", targets: ["ferry"]),
        .executable(name: "ferry-ui", targets: ["ferry-ui"]),
        .executable(name: "ferry-thumbnail", targets: ["ferry-thumbnail"]),
        .executable(name: "ferry-media", targets: ["ferry-media"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        // GIO headers, found through pkg-config; fenced behind GLibAdapter.
        .systemLibrary(
            name: "CGLib", pkgConfig: "gio-unix-2.0",
            providers: [.apt(["libglib2.0-dev"])]),
        // The only module that touches GLib pointers; offers a Swift-shaped surface. libsecret (the
        // Secret Service) is not linked: GLibAdapter opens it at its first use (LibSecret).
        .target(name: "GLibAdapter", dependencies: ["CGLib", "FerryCore"]),
        // Pure Swift: share intents, validation, routing, errors. No GLib, no I/O.
        .target(name: "FerryCore"),
        // Copies accepted files into Ferry's private spool before a share is acknowledged.
        .target(
            name: "FerryStaging",
            dependencies: ["FerryCore", "GLibAdapter", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        // The durable outbox: SQLite through GRDB, and through SQLite's C API (GRDBSQLite) for
        // the first share of a cold start (ColdConnection).
        .target(
            name: "FerryOutbox",
            dependencies: [
                "FerryCore", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The Matrix client-server API over HTTP: sign-in, rooms, media, events. No D-Bus, no SQLite.
        .target(
            name: "FerryMatrix",
            dependencies: [
                "FerryCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // SHA-256 for PKCE (OAuth 2.0 sign-in).
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // The sign-in step: the account, its token in the Secret Service (or a private file).
        .target(
            name: "FerryAccount",
            dependencies: [
                "FerryCore", "FerryMatrix", "FerryOutbox", "GLibAdapter",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        // The in-process sender: queued shares become Matrix events, exactly once.
        .target(
            name: "FerrySender",
            dependencies: [
                "FerryCore", "FerryMatrix", "FerryOutbox", "FerryStaging", "FerryAccount",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        // Olm and Megolm, the protocol layer only: every primitive is swift-crypto's (BoringSSL).
        // Pure: no I/O, no HTTP, no SQLite; state is values the caller keeps.
        .target(
            name: "FerryCrypto",
            dependencies: [
                "FerryCore", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]),
        // The Share1 contract as Swift sees it: bus names, the a{sv} codecs, one typed client.
        // The service, the command line and the UI all use it; it knows nothing of how a share is kept or sent.
        // End-to-end encryption for the sender: the device, its sessions kept sealed in the
        // outbox, and a homeserver that encrypts (FerryCrypto does the protocol).
        .target(
            name: "FerryEncryption",
            dependencies: [
                "FerryCore", "FerryCrypto", "FerryMatrix", "FerryOutbox", "FerryAccount",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        .target(name: "FerryContract", dependencies: ["FerryCore", "GLibAdapter"]),
        // Turns D-Bus calls (Share1, org.freedesktop.Application.Open) into share requests.
        // The headless GApplication that owns everything: wiring and lifetime.
        .target(
            name: "FerryService",
            dependencies: [
                "FerryCore", "FerryContract", "FerryOutbox", "FerryStaging", "FerryAccount",
                "FerrySender", "FerryMatrix",
                "FerryEncryption", "GLibAdapter",
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [
                // The interface XML in data/dbus is the contract; the service exports exactly that text.
                .embedInCode("Share1.xml")
            ]),
        // The command line: a D-Bus client of the service, through the contract; it does not link the service.
        .target(
            name: "FerryCLI",
            dependencies: [
                "FerryCore", "FerryContract", "GLibAdapter",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // `ferry`: the command line, and `ferry service` handed to the service module directly.
        .executableTarget(name: "ferry", dependencies: ["FerryCLI", "FerryService", "GLibAdapter"]),
        // GTK 4 and libadwaita headers, for ferry-ui only; fenced behind GtkAdapter.
        .systemLibrary(
            name: "CGtk", pkgConfig: "libadwaita-1",
            providers: [.apt(["libgtk-4-dev", "libadwaita-1-dev"])]),
        // The only UI module that touches GTK pointers: Swift-shaped widgets and signals.
        .target(name: "GtkAdapter", dependencies: ["CGtk"]),
        // The share dialog, the sign-in page and the main window: a D-Bus client of the service
        // that knows no HTTP and no SQLite. One page a file.
        .target(name: "FerryUI", dependencies: ["FerryCore", "FerryContract", "GLibAdapter", "GtkAdapter"]),
        .executableTarget(
            name: "ferry-ui", dependencies: ["FerryUI", "GLibAdapter"], linkerSettings: [.linkedLibrary("m")]),
        // GdkPixbuf and its loaders, for ferry-thumbnail only: the service never maps a decoder.
        .systemLibrary(
            name: "CGdkPixbuf", pkgConfig: "gdk-pixbuf-2.0",
            providers: [.apt(["libgdk-pixbuf-2.0-dev"])]),
        // The picture reader the sender runs for each image it sends: displayed size, thumbnail,
        // blurhash, in a process of its own (its main.swift says why).
        .executableTarget(name: "ferry-thumbnail", dependencies: ["PixbufAdapter", "FerryCore"]),
        // The helpers' one way into GdkPixbuf: a decoded picture, its thumbnail and blurhash.
        .target(name: "PixbufAdapter", dependencies: ["CGdkPixbuf", "FerryCore"]),
        // GStreamer, for ferry-media only: the service never maps a demuxer or a decoder.
        .systemLibrary(
            name: "CGStreamer", pkgConfig: "gstreamer-app-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]),
        // The video and sound reader the sender runs for each it sends: duration, size, poster
        // frame, in a process of its own (its main.swift says why).
        .executableTarget(name: "ferry-media", dependencies: ["CGStreamer", "PixbufAdapter", "FerryCore"]),
        // `make bench`'s reference for a cold start: a GApplication and nothing else.
        .executableTarget(name: "bare-gapplication", dependencies: ["CGLib"], path: "Tests/bench/BareGApplication"),
        // The interoperability tests' way into FerryCrypto: JSON lines in, JSON lines out.
        .executableTarget(
            name: "ferry-crypto-probe", dependencies: ["FerryCrypto", "FerryCore", "FerryMatrix"],
            path: "Tests/crypto/Probe"),
        .testTarget(name: "FerryCryptoTests", dependencies: ["FerryCrypto", "FerryCore"]),
        .testTarget(
            name: "FerryEncryptionTests",
            dependencies: [
                "FerryEncryption", "FerryAccount", "FerryCrypto", "FerryCore", "FerryMatrix", "FerryOutbox",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "FerryCoreTests", dependencies: ["FerryCore", "FerryContract"]),
        .testTarget(name: "FerryOutboxTests", dependencies: ["FerryOutbox", "FerryCore"]),
        .testTarget(
            name: "FerryStagingTests",
            dependencies: ["FerryStaging", "FerryCore", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        .testTarget(
            name: "FerryMatrixTests",
            dependencies: [
                "FerryMatrix", .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        .testTarget(
            name: "FerrySenderTests",
            dependencies: [
                "FerrySender", "FerryMatrix", "FerryCore", "FerryStaging", "FerryOutbox",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        .testTarget(name: "FerryUITests", dependencies: ["FerryUI"]),
        .testTarget(name: "FerryCLITests", dependencies: ["FerryCLI", "FerryContract", "FerryCore"]),
        .testTarget(
            name: "FerryServiceTests",
            dependencies: [
                "FerryService", "FerryAccount", "FerryContract", "FerryCore", "FerryEncryption",
            ]),
        .testTarget(name: "GLibAdapterTests", dependencies: ["GLibAdapter", "CGLib"]),
        .testTarget(
            name: "FerryAccountTests", dependencies: ["FerryAccount", "FerryCore", "FerryMatrix", "FerryOutbox"]),
        // Every parser of outside input as a function of bytes: libFuzzer drives it (`make fuzz`),
        // the unit tests replay its committed corpus.
        .target(
            name: "FerryFuzzTargets",
            dependencies: [
                "FerryCore", "FerryContract", "FerryMatrix", "FerryAccount", "FerryCrypto",
                "GLibAdapter",
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ], path: "Tests/fuzz/Targets"),
        .executableTarget(name: "ferry-fuzz", dependencies: ["FerryFuzzTargets"], path: "Tests/fuzz/Driver"),
        .testTarget(name: "FerryFuzzTests", dependencies: ["FerryFuzzTargets"]),
    ],
    swiftLanguageModes: [.v6]
)

// Ferry's own code builds without a warning: in its targets every warning is an error, so a new one
// fails the build (and CI) where it appears. Dependencies keep theirs: SwiftPM builds a remote
// package with its warnings suppressed.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
}

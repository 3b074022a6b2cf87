import FerryAccount
import FerryContract
import FerryCore
import FerryEncryption
import FerryOutbox
import FerrySender
import FerryStaging
import GLibAdapter
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `ferry service`: the headless GApplication that owns the bus name, the outbox and the spool.
public enum ServiceApplication {
    /// Whether the outbox has shares waiting for Ferry itself (queued or sending), read without
    /// creating anything: at login, a desktop with nothing pending should not start the service.
    public static func hasPendingWork(settings: ServiceSettings) -> Bool {
        guard access(settings.paths.database, R_OK) == 0, let outbox = try? Outbox(path: settings.paths.database) else {
            return false
        }
        return (try? outbox.hasPendingWork()) ?? false
    }

    /// Runs the service until it has been idle for the configured timeout; returns the exit status.
    @GLibMain public static func run(settings: ServiceSettings, logger: Logger) -> Int32 {
        let application = Application(id: FerryBus.name)
        application.inactivityTimeout = settings.idleTimeout * 1000
        let lifetime = Lifetime(application: application)

        let service: ShareService
        let share1: Share1Object
        // What the service's parts announce, connected to the bus and the desktop below, once
        // the bus object exists.
        let announcements = WiredLater<@Sendable (ServiceEvent) -> Void>({ _ in })
        let stateLock: StateLock
        do {
            try PrivateDirectory.create(settings.paths.stateDirectory)
            // Before the spool or the outbox is touched: a second service changes nothing.
            do {
                stateLock = try StateLock(path: settings.paths.stateDirectory + "/lock")
            } catch {
                let owner = error.ownerPID > 0 ? " (process \(error.ownerPID))" : ""
                let path = settings.paths.stateDirectory
                logger.error("another Ferry service\(owner) already owns \(path); this one stops without touching it")
                return 75
            }
            let spool = try Spool(root: settings.paths.spool)
            let outbox = try Outbox(path: settings.paths.database)
            let encryptionKeys = TokenVault.encryptionKey(stateDirectory: settings.paths.stateDirectory, logger: logger)
            let accounts = Accounts(
                outbox: outbox, vault: TokenVault(stateDirectory: settings.paths.stateDirectory, logger: logger),
                otherVaults: [encryptionKeys], logger: logger)
            let encryptions = AccountEncryptions { userID in
                Encryption(
                    records: outbox.cryptoRecords(of: userID), vault: encryptionKeys,
                    onlyVerifiedDevices: settings.onlyVerifiedDevices, logger: logger, clock: SystemClock.microseconds)
            }
            let sender = Sender(
                outbox: outbox, spool: spool, account: accounts, backoff: settings.backoff, logger: logger,
                clock: SystemClock.microseconds, working: { CrashWitness.working(on: $0) },
                connect: { EncryptingHomeserver(session: $0, encryption: encryptions.of($0.userID)) },
                pictures: ThumbnailHelper(locate: { InstalledProgram.path("ferry-thumbnail") }, logger: logger),
                media: MediaHelper(locate: { InstalledProgram.path("ferry-media") }, logger: logger))
            // Every part in one step, each given what it needs: what the sender and the verifier
            // report reaches the service through their streams (ShareService.listen).
            let verification = VerificationService(
                accounts: accounts, encryptions: encryptions,
                emojiVerifier: EmojiVerifier(
                    encryptions: encryptions, logger: logger, timeLimit: settings.verificationTimeLimit),
                announcements: announcements, logger: logger)
            service = ShareService(
                outbox: outbox, spool: spool, limits: settings.limits, accounts: accounts, sender: sender,
                verification: verification, announcements: announcements, logger: logger)
            let accountService = AccountService(
                accounts: accounts, shares: service, encryptions: encryptions, verification: verification,
                announcements: announcements, logger: logger)
            service.sweepSpool()
            // The shared session connection is the one GApplication will own the name on:
            // exporting Share1 on it now makes it reachable the moment the name is owned.
            let avatars = AvatarCache(
                accounts: accounts, cacheDirectory: settings.paths.cacheDirectory, logger: logger,
                clock: SystemClock.microseconds)
            share1 = Share1Object(
                service: service, accounts: accountService, avatars: avatars, connection: try BusConnection.session(),
                lifetime: lifetime, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            return 1
        }

        // Where the service's events go: the bus (signals, properties) and the desktop
        // (notifications, dialogs), connected here and nowhere else, before any call can arrive.
        let desktop = Desktop(
            application: application, dialogs: DialogLauncher(environment: settings.environment, logger: logger),
            logger: logger)
        announcements.wire { event in
            switch event {
            case .shareChanged(let share): share1.announceShareChanged(share)
            case .signInRequired(let reason):
                share1.announceSignInRequired(reason)
                desktop.signInRequired(reason)
            case .pendingWorkChanged(let pending): lifetime.setPendingWork(pending)
            case .accountChanged: share1.announceAccountChanged()
            case .needsPerson(let share, let token): desktop.needsPerson(share, activationToken: token)
            case .finished(let share, let names): desktop.finished(share, destinationNames: names)
            case .emojiVerificationChanged(let state):
                // The process stays while the other device may still answer, and until the
                // server said whether it signed Ferry's device.
                lifetime.setVerifying(!state.isOver || (state.stage == .done && state.verification == nil))
                share1.announceEmojiVerification(state)
            }
        }
        share1.onOpenRefused.wire(desktop.refused)
        // What committing a share does not need waits until just after the first one is answered (StartUp).
        // The process is held until it ran: it may hold itself for pending work then.
        let crashNotes = settings.paths.stateDirectory + "/crashes"
        let startUp = StartUp { [unowned service] startUp in
            // A share the service crashed on three times is set aside before the sender sees it;
            // from here on, a crash leaves a note naming the share being sent.
            let crashed = CrashedShares.setAside(
                notesAt: crashNotes, outbox: service.outbox,
                at: SystemClock.microseconds(), logger: logger)
            CrashWitness.install(path: crashNotes)
            service.announcePendingWork()
            crashed.forEach(service.senderFinished)
            for accepted in startUp.takeHeldBack() {
                service.announceAccepted(accepted.share, activationToken: accepted.activationToken)
            }
            // A stored sign-in whose token turns out to be gone (read in the background) is heard
            // now that there is someone to tell, after the shares accepted as the person's.
            service.accounts.whenSignInLost { [unowned service] user in service.signInLost(user) }
            service.listen()
            service.sender.start()
            service.sender.wake()
            application.release()
        }
        service.startUp.wire(startUp)
        share1.startUp.wire(startUp)
        desktop.addActions(retry: { id in
            startUp.complete()
            // The notification's Retry has nobody to answer: what refused it goes to the log.
            do throws(ShareError) { _ = try service.retry(id: id) } catch {
                logger.notice(
                    "retry from a notification refused",
                    metadata: ["share": "\(id)", "error": "\(error.shortName)"])
            }
        })
        do {
            try share1.export()
        } catch {
            logger.critical("cannot start: \(error)")
            return 1
        }
        application.hold()
        startUp.armFallback()
        // Deliveries waiting for their backoff go at once when the network comes back. Only a
        // wake-up: sending is never held back on the monitor's word (loopback servers need no network).
        // Set up once the first calls are answered: GIO's monitor asks NetworkManager on the
        // system bus for its state, round trips a cold start need not wait for.
        MainContext.after(milliseconds: 500) {
            NetworkMonitor.onChange { available in
                logger.info("network \(available ? "available" : "gone")")
                if available { service.sender.wake(now: true) }
            }
        }
        for signal in [SIGTERM, SIGINT, SIGHUP] {
            MainContext.onUnixSignal(signal) {
                logger.info("stopping on signal \(signal)")
                application.quit()
            }
        }
        logger.info(
            "service starting",
            metadata: [
                "state": "\(settings.paths.stateDirectory)",
                "idle-timeout": "\(settings.idleTimeout)s",
            ])
        let status = application.run()
        logger.info("service stopped")
        _ = (lifetime, stateLock)
        return status
    }
}

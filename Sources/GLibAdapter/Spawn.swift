import CGLib

/// Starting a helper program that lives on its own (the dialog process): GLib reaps it when it exits.
public enum Spawn {
    public static func detached(_ argv: [String], environment: [String: String]) throws(GLibError) {
        var error: UnsafeMutablePointer<GError>?
        let args = argv.map { strdup($0) } + [nil]
        let env = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            args.forEach { free($0) }
            env.forEach { free($0) }
        }
        var argvPointers = args
        var envPointers = env
        let started = argvPointers.withUnsafeMutableBufferPointer { argvBuffer in
            envPointers.withUnsafeMutableBufferPointer { envBuffer in
                g_spawn_async(
                    nil, argvBuffer.baseAddress, envBuffer.baseAddress, G_SPAWN_DEFAULT, nil, nil, nil, &error)
            }
        }
        if started == 0, let error { throw GLibError(consuming: error) }
    }
}

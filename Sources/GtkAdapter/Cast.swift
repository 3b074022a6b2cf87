import CGtk

// GTK's C types import either as typed pointers (public instance structs: GtkWidget, GtkBox,
// GtkButton…) or as OpaquePointer (private ones: GtkLabel, GtkListBox…), and that differs between
// GTK versions. `cast` lets each call site say neither: the parameter type picks the overload.

@inline(__always) func cast<T>(_ pointer: UnsafeMutablePointer<GtkWidget>) -> UnsafeMutablePointer<T> {
    UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: T.self)
}

@inline(__always) func cast(_ pointer: UnsafeMutablePointer<GtkWidget>) -> OpaquePointer {
    OpaquePointer(pointer)
}

@inline(__always) func cast<T>(_ pointer: UnsafeMutableRawPointer) -> UnsafeMutablePointer<T> {
    pointer.assumingMemoryBound(to: T.self)
}

@inline(__always) func cast(_ pointer: UnsafeMutableRawPointer) -> OpaquePointer {
    OpaquePointer(pointer)
}

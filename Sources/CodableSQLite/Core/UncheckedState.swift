/// A value kept outside its owner's stored properties, for state that something else already
/// makes exclusive: a lock every access happens under, or the one thread that owns it.
///
/// Each access to a class's stored `var` costs a dynamic exclusivity check (`swift_beginAccess`
/// and often `swift_endAccess`, about 110 instructions), which such state does not need; on the
/// paths every lookup takes (the connection pool, the thread's held connections, the database's
/// attachments, the model registry) they were a few percent of a lookup by primary key. Reached
/// through ``pointee`` the value is not checked, so this type guards nothing itself: every use
/// must already be exclusive. A class, so that it is freed with its owner, also when the owner's
/// `init` throws.
///
/// ```swift
/// private let lock = NSLock()
/// private let waiting = UncheckedState<[Waiter]>([])   // read and written under `lock`
/// lock.withLock { waiting.pointee.append(waiter) }
/// ```
final class UncheckedState<Value> {
    private let storage: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// The value, read and changed in place.
    var pointee: Value {
        unsafeAddress { UnsafePointer(storage) }
        unsafeMutableAddress { storage }
    }
}

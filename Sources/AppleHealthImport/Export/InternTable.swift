/// Distinct byte strings (attribute values such as type identifiers, units, source
/// names, device strings) each parsed once: the second time a spelling appears its
/// parsed value is a table lookup.
///
/// Used by one mapper on one thread. Its state sits behind a constant pointer, as the
/// scanner's does: a lookup per attribute of every Record then pays no dynamic
/// exclusivity check (they were ~5% of an import's CPU time).
final class InternTable<Value> {
    private struct State {
        var names = NameTable()
        var values: [Value] = []
    }

    private let state: UnsafeMutablePointer<State>
    /// Most distinct spellings kept; past it values are parsed each time (hostile input).
    let limit: Int

    init(limit: Int = 100_000) {
        self.limit = limit
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    deinit {
        state.pointee.names.release()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The value for `bytes`, made by `make` from the text the first time.
    @inline(__always)
    func value(_ bytes: Span<UInt8>, _ make: (String) -> Value) -> Value {
        bytes.withUnsafeBufferPointer { bytes in
            guard let p = bytes.baseAddress, !bytes.isEmpty else { return make("") }
            return value(bytes, hash: NameTable.hash(p, bytes.count), make)
        }
    }

    /// The same, with the bytes' hash already computed (one hash per attribute value).
    @inline(__always)
    func value(_ bytes: Span<UInt8>, hash: UInt64, _ make: (String) -> Value) -> Value {
        bytes.withUnsafeBufferPointer { value($0, hash: hash, make) }
    }

    @inline(__always)
    private func value(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64, _ make: (String) -> Value) -> Value {
        guard let p = bytes.baseAddress, !bytes.isEmpty else { return make("") }
        if state.pointee.names.count >= limit { return make(String(decoding: bytes, as: UTF8.self)) }
        let id = state.pointee.names.id(p, bytes.count, hash: hash)
        if id < state.pointee.values.count { return state.pointee.values[id] }
        let made = make(String(decoding: bytes, as: UTF8.self))
        state.pointee.values.append(made)
        return made
    }
}

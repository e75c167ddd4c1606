/// Distinct byte strings (attribute values such as type identifiers, units, source
/// names, device strings) each parsed once: the second time a spelling appears its
/// parsed value is a table lookup.
final class InternTable<Value> {
    private var names = NameTable()
    private var values: [Value] = []
    /// Most distinct spellings kept; past it values are parsed each time (hostile input).
    private let limit: Int

    init(limit: Int = 100_000) { self.limit = limit }

    deinit { names.release() }

    /// The value for `bytes`, made by `make` from the text the first time.
    @inline(__always)
    func value(_ bytes: UnsafeBufferPointer<UInt8>, _ make: (String) -> Value) -> Value {
        guard let p = bytes.baseAddress, !bytes.isEmpty else { return make("") }
        return value(bytes, hash: NameTable.hash(p, bytes.count), make)
    }

    /// The same, with the bytes' hash already computed (one hash per attribute value).
    @inline(__always)
    func value(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64, _ make: (String) -> Value) -> Value {
        guard let p = bytes.baseAddress, !bytes.isEmpty else { return make("") }
        if names.count >= limit { return make(String(decoding: bytes, as: UTF8.self)) }
        let id = names.id(p, bytes.count, hash: hash)
        if id < values.count { return values[id] }
        let made = make(String(decoding: bytes, as: UTF8.self))
        values.append(made)
        return made
    }
}

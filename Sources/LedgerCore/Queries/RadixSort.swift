/// Sorting 64-bit keys by their upper 32 bits, in linear time: a query's window sorts
/// (slot << 32 | position in the window) keys into slot order, two million at a time
/// (`SampleReader`), where the standard library's comparison sort took a tenth of a
/// second per million.
enum RadixSort {
    /// Sorts `keys` by their upper halves, stably (keys with equal upper halves keep
    /// their order): a least-significant-digit radix sort, 16 bits a pass, one pass when
    /// every upper half is below 2^16. `scratch` is working space (its contents are
    /// replaced).
    static func sortByUpperHalf(_ keys: inout [UInt64], scratch: inout [UInt64]) {
        guard keys.count > 1 else { return }
        let largest = keys.reduce(UInt64(0)) { max($0, $1 >> 32) }
        let passes = largest < 1 << 16 ? 1 : 2
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: repeatElement(0, count: keys.count))
        var counts = [Int](repeating: 0, count: 1 << 16)
        for pass in 0..<passes {
            let shift = UInt64(32 + 16 * pass)
            counts.withUnsafeMutableBufferPointer { c in
                for i in c.indices { c[i] = 0 }
                keys.withUnsafeBufferPointer { k in
                    for key in k { c[Int((key >> shift) & 0xFFFF)] += 1 }
                }
                var total = 0
                for i in c.indices {
                    let n = c[i]
                    c[i] = total
                    total += n
                }
                keys.withUnsafeBufferPointer { k in
                    scratch.withUnsafeMutableBufferPointer { out in
                        for key in k {
                            let digit = Int((key >> shift) & 0xFFFF)
                            out[c[digit]] = key
                            c[digit] += 1
                        }
                    }
                }
            }
            swap(&keys, &scratch)
        }
    }
}

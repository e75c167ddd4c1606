import Foundation
import LedgerLog

/// `healthledger-bench merkle`: the Merkle tree's costs on a log of `records` 100-byte
/// records: building index/merkle.bin from the log, keeping it up to date after appends
/// (batched and durable single), and what `checkpoint` and `prove` cost on the result.
enum MerkleBench {
    static func run(report: Report, scratch: String, records: Int, durableCount: Int) async throws {
        let fs = LogBench.fresh(scratch + "/merkle-\(records)")
        let data = LogBench.payloads(100)
        func appendBatched(_ writer: LogWriter, _ n: Int) async throws -> Double {
            let start = Measure.now()
            var i = 0
            while i < n {
                var batch = RecordBatch(capacity: 1000 * 132)
                for j in i..<min(i + 1000, n) { batch.append(kind: 1, version: 1, payload: data[j % data.count]) }
                try await writer.append(batch, durability: .deferred)
                i += 1000
            }
            try await writer.sync()
            return Measure.now() - start
        }
        var writer = try LogWriter.create(fs)
        let appendAll = try await appendBatched(writer, records)
        try await writer.close()
        report.line("merkle: log append \(records) (no tree)", [("s", appendAll), ("records_per_s", Double(records) / appendAll)])

        var opened: (tree: MerkleTreeFile, found: MerkleTreeFile.Found)?
        let build = try Measure.time { opened = try MerkleTreeFile.open(fs, reader: try LogReader(fs)) }
        let fileBytes = try FileManager.default.attributesOfItem(atPath: fs.path + "/" + MerkleTreeFile.fileName)[.size] as! Int
        let logBytes = try FileManager.default.attributesOfItem(atPath: fs.path + "/ledger.log")[.size] as! Int
        report.line("merkle: rebuild tree from log", [("s", build), ("records_per_s", Double(records) / build),
                                                      ("file_MB", Double(fileBytes) / 1_048_576),
                                                      ("file_pct_of_log", 100 * Double(fileBytes) / Double(logBytes))])

        // Batched appends, then bringing the tree up to date (what close does).
        let more = max(1000, records / 10)
        writer = try LogWriter.open(fs)
        let appendMore = try await appendBatched(writer, more)
        try await writer.close()
        let catchUp = try Measure.time { opened = try MerkleTreeFile.open(fs, reader: try LogReader(fs)) }
        report.line("merkle: batched append \(more) + tree", [("append_s", appendMore), ("tree_s", catchUp),
                                                             ("overhead_pct", 100 * catchUp / appendMore)])

        // Durable single appends, then the tree.
        if durableCount > 0 {
            writer = try LogWriter.open(fs)
            let start = Measure.now()
            for j in 0..<durableCount { _ = try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: data[j % data.count])]) }
            let durable = Measure.now() - start
            try await writer.close()
            let tree = try Measure.time { opened = try MerkleTreeFile.open(fs, reader: try LogReader(fs)) }
            report.line("merkle: durable single \(durableCount) + tree", [("append_s", durable), ("tree_s", tree),
                                                                         ("overhead_pct", 100 * tree / durable)])
        }

        // checkpoint: open the (current) tree file, root, signed note.
        let signer = try SignedNote.Signer(name: "bench", seed: [UInt8](repeating: 1, count: 32))
        var times: [Double] = []
        for _ in 0..<20 {
            times.append(try Measure.time {
                let t = try MerkleTreeFile.open(fs, reader: try LogReader(fs)).tree
                _ = signer.sign(TreeCheckpoint(origin: "healthledger/bench", size: t.size, root: t.root).text)
            })
        }
        let size = opened?.tree.size ?? 0
        report.line("merkle: checkpoint (open+root+sign)", [("size", Double(size)), ("median_ms", median(times) * 1000)])

        // prove: inclusion of random events, and consistency from half the size.
        var rng = SystemRandomNumberGenerator()
        times = []
        for _ in 0..<20 {
            let seq = UInt64.random(in: 1...size, using: &rng)
            times.append(try Measure.time {
                let t = try MerkleTreeFile.open(fs, reader: try LogReader(fs)).tree
                let proof = try t.inclusionProof(index: seq - 1, size: t.size)
                let leaf = try t.leafInput(sequence: seq)
                try Merkle.verifyInclusion(index: seq - 1, size: t.size, leaf: Merkle.leafHash(leaf), proof: proof, root: t.root)
            })
        }
        report.line("merkle: prove inclusion (open+proof)", [("size", Double(size)), ("median_ms", median(times) * 1000),
                                                            ("max_ms", (times.max() ?? 0) * 1000)])
        times = []
        for k in 0..<20 {
            let old = size / 2 + UInt64(k * 37)
            times.append(try Measure.time {
                let t = try MerkleTreeFile.open(fs, reader: try LogReader(fs)).tree
                _ = try t.consistencyProof(size1: old, size2: t.size)
            })
        }
        report.line("merkle: prove consistency (open+proof)", [("size", Double(size)), ("median_ms", median(times) * 1000)])
    }

    static func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
}

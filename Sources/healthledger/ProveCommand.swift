import Foundation
import HealthLedger
import LedgerTools
import HealthModel
import LedgerReporting

/// `healthledger prove`: inclusion proofs for one event, consistency proofs from an
/// older checkpoint; checkable by anyone with `tools/verify_proof.py`.
enum ProveCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] prove SAMPLE-UUID [--size S] [--key FILE] [--json]
               healthledger [--ledger PATH] prove --seq N [--size S] [--key FILE] [--json]
               healthledger [--ledger PATH] prove --from-checkpoint OLD.txt [--key FILE] [--json]

        Inclusion: the event that saved SAMPLE-UUID (or event N) is leaf N−1 of the
        ledger's RFC 9162 Merkle tree. Prints the leaf index, the tree size (all events,
        or the first S), the record's bytes (the leaf input, base64), the sample as JSON
        when asked by UUID, the audit path and the checkpoint note of that tree
        (signed when the ledger has a key; a key file others may read is refused, exit 5).
        Consistency: the tree of OLD.txt's size is a prefix of today's tree; prints both
        sizes and roots, the proof and today's checkpoint note.
        --json prints one object, the input of tools/verify_proof.py:
          {"type":"inclusion","origin","index","sequence","size","leafInput","path":[base64…],
           "root","checkpoint"[,"sample"]}
          {"type":"consistency","origin","size1","size2","root1","root2","path":[…],
           "oldCheckpoint","checkpoint"}

        \(ExitStatus.table)
        """

    static let command = Command(name: "prove", abstract: "Print an inclusion or consistency proof", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let seqText = try args.option("--seq")
        let sizeText = try args.option("--size")
        let from = try args.option("--from-checkpoint")
        let keyPath = try args.option("--key")
        let uuidText = args.positional()
        try args.finish()
        guard [seqText != nil, from != nil, uuidText != nil].filter({ $0 }).count == 1 else {
            throw CLIError.usage("prove takes one of SAMPLE-UUID, --seq N, --from-checkpoint FILE")
        }
        let log = try global.reads.transparencyLog()
        let signer = try CheckpointKeys.signer(localFolder: LedgerAccess.localFolder(global), keyPath: keyPath)
        let origin = log.origin

        if let from {
            guard sizeText == nil else { throw CLIError.usage("--size goes with an inclusion proof") }
            let (oldNote, old) = try TransparencyLog.readCheckpoint(from)
            let proof = try log.consistency(from: old)
            let note = try log.note(size: proof.size2, signer: signer)
            let root1 = TransparencyLog.base64(proof.root1), root2 = TransparencyLog.base64(proof.root2), path = proof.path.map(TransparencyLog.base64)
            if global.json {
                var o = JSONObject()
                o.set("type", "consistency"); o.set("origin", origin)
                o.set("size1", proof.size1); o.set("size2", proof.size2)
                o.set("root1", root1); o.set("root2", root2)
                o.setRaw("path", JSONObject.array(path.map { "\"\($0)\"" }))
                o.set("oldCheckpoint", oldNote); o.set("checkpoint", note)
                Output.line(o.string)
            } else {
                Output.line("consistency proof: \(proof.size1) → \(proof.size2) events")
                Output.line("root \(proof.size1): \(root1)")
                Output.line("root \(proof.size2): \(root2)")
                Output.line("path (\(path.count)):")
                for p in path { Output.line("  \(p)") }
                Output.line("checkpoint:")
                Output.line(String(note.dropLast()))
            }
            return
        }

        var sequence: UInt64
        var sampleJSON: String?
        if let seqText {
            sequence = try LedgerAccess.sequence(seqText, "--seq")
        } else {
            guard let uuid = UUIDText.parse(uuidText ?? "") else { throw CLIError.usage("'\(uuidText ?? "")' is not a UUID") }
            guard let (offset, sample) = try LedgerView.read(global, as: .owner).storedSample(uuid) else {
                throw CLIError.notFound("sampleNotFound: \(uuid.uuidString)")
            }
            sequence = try global.reads.sequence(ofRecordAt: offset)
            sampleJSON = SampleJSON.object(sample).string
        }
        var size = log.size
        if let sizeText {
            guard let s = UInt64(sizeText), s >= sequence, s <= log.size else {
                throw CLIError.usage("--size takes a number of events from \(sequence) to \(log.size)")
            }
            size = s
        }
        let proof = try log.inclusion(sequence: sequence, size: size)
        let index = proof.index
        let path = proof.path.map(TransparencyLog.base64), root = TransparencyLog.base64(proof.root)
        let note = try log.note(size: size, signer: signer)
        let leafB64 = Data(proof.leafInput).base64EncodedString()
        if global.json {
            var o = JSONObject()
            o.set("type", "inclusion"); o.set("origin", origin)
            o.set("index", index); o.set("sequence", sequence); o.set("size", size)
            o.set("leafInput", leafB64)
            o.setRaw("path", JSONObject.array(path.map { "\"\($0)\"" }))
            o.set("root", root); o.set("checkpoint", note)
            if let sampleJSON { o.setRaw("sample", sampleJSON) }
            Output.line(o.string)
        } else {
            Output.line("inclusion proof: event \(sequence) (leaf index \(index)) in a tree of \(size) events")
            Output.line("leaf hash: \(TransparencyLog.base64(proof.leafHash))")
            Output.line("record (leaf input, base64): \(leafB64)")
            if let sampleJSON { Output.line("sample: \(sampleJSON)") }
            Output.line("root: \(root)")
            Output.line("path (\(path.count)):")
            for p in path { Output.line("  \(p)") }
            Output.line("checkpoint:")
            Output.line(String(note.dropLast()))
        }
    }
}

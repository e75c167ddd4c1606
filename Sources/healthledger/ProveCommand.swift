import Foundation
import HealthLedger
import LedgerCore
import LedgerLog
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
        let (fs, reader) = try LedgerAccess.reader(global)
        let tree = try Transparency.tree(fs, reader)
        let signer = try Transparency.signer(global, keyPath: keyPath)
        let origin = Transparency.origin(reader)

        if let from {
            guard sizeText == nil else { throw CLIError.usage("--size goes with an inclusion proof") }
            let (oldNote, old) = try Transparency.readCheckpoint(from)
            guard old.origin == origin else { throw CLIError.invalidInput("wrongLedger: the checkpoint is of \(old.origin), this ledger is \(origin)") }
            guard old.size <= tree.size else {
                throw CLIError(status: ExitStatus.damaged, message: "notExtended: the checkpoint covers \(old.size) events, the ledger has \(tree.size)")
            }
            let root1 = try tree.root(size: old.size)
            guard root1 == old.root else {
                throw CLIError(status: ExitStatus.damaged, message: "notExtended: the ledger's first \(old.size) events hash to \(IntegrityReport.base64(root1)), the checkpoint says \(IntegrityReport.base64(old.root))")
            }
            let path = try tree.consistencyProof(size1: old.size, size2: tree.size)
            let note = try Transparency.note(tree, reader, size: tree.size, signer: signer)
            if global.json {
                var o = JSONObject()
                o.set("type", "consistency"); o.set("origin", origin)
                o.set("size1", old.size); o.set("size2", tree.size)
                o.set("root1", IntegrityReport.base64(root1)); o.set("root2", IntegrityReport.base64(tree.root))
                o.setRaw("path", JSONObject.array(path.map { "\"\(IntegrityReport.base64($0))\"" }))
                o.set("oldCheckpoint", oldNote); o.set("checkpoint", note)
                Output.line(o.string)
            } else {
                Output.line("consistency proof: \(old.size) → \(tree.size) events")
                Output.line("root \(old.size): \(IntegrityReport.base64(root1))")
                Output.line("root \(tree.size): \(IntegrityReport.base64(tree.root))")
                Output.line("path (\(path.count)):")
                for p in path { Output.line("  \(IntegrityReport.base64(p))") }
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
            sequence = try reader.record(atOffset: offset).sequence
            sampleJSON = SampleJSON.object(sample).string
        }
        var size = tree.size
        if let sizeText {
            guard let s = UInt64(sizeText), s >= sequence, s <= tree.size else {
                throw CLIError.usage("--size takes a number of events from \(sequence) to \(tree.size)")
            }
            size = s
        }
        guard sequence <= size else { throw CLIError.notFound("sequenceNotFound: event \(sequence) (the ledger has \(tree.size))") }
        let index = sequence - 1
        let leafInput = try tree.leafInput(sequence: sequence)
        let path = try tree.inclusionProof(index: index, size: size)
        let root = try tree.root(size: size)
        let note = try Transparency.note(tree, reader, size: size, signer: signer)
        let leafB64 = Data(leafInput).base64EncodedString()
        if global.json {
            var o = JSONObject()
            o.set("type", "inclusion"); o.set("origin", origin)
            o.set("index", index); o.set("sequence", sequence); o.set("size", size)
            o.set("leafInput", leafB64)
            o.setRaw("path", JSONObject.array(path.map { "\"\(IntegrityReport.base64($0))\"" }))
            o.set("root", IntegrityReport.base64(root)); o.set("checkpoint", note)
            if let sampleJSON { o.setRaw("sample", sampleJSON) }
            Output.line(o.string)
        } else {
            Output.line("inclusion proof: event \(sequence) (leaf index \(index)) in a tree of \(size) events")
            Output.line("leaf hash: \(IntegrityReport.base64(Merkle.leafHash(leafInput)))")
            Output.line("record (leaf input, base64): \(leafB64)")
            if let sampleJSON { Output.line("sample: \(sampleJSON)") }
            Output.line("root: \(IntegrityReport.base64(root))")
            Output.line("path (\(path.count)):")
            for p in path { Output.line("  \(IntegrityReport.base64(p))") }
            Output.line("checkpoint:")
            Output.line(String(note.dropLast()))
        }
    }
}

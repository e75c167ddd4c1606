#!/usr/bin/env python3
"""Checks what `healthledger checkpoint` and `healthledger --json prove` print, using the
Python standard library only: nothing of HealthLedger's code is trusted.

  verify_proof.py [--key VERIFIER-KEY] CHECKPOINT.txt | INCLUSION.json
  verify_proof.py [--key VERIFIER-KEY] --old OLD-CHECKPOINT.txt CONSISTENCY.json

The verifier key is `name+hash+base64(0x01 || public key)` (`healthledger key generate`).
With --key, every checkpoint relied on must carry a valid signature by that key (an
unsigned or wrongly signed one is refused, naming which); without it, signatures are
reported but not checked.

A consistency proof is checked from the checkpoint YOU kept (--old): the one inside the
proof is the prover's word, so it must equal yours (origin, size and root) and the proof
must lead from your root to the new checkpoint's. Both roots are printed.

Exit 0: all checks; 1: not; 2: usage. RFC 9162 proofs (transparency-dev/merkle's
algorithm), RFC 8032 Ed25519, sumdb/note notes.
"""
import base64, hashlib, json, sys

# --- Ed25519 verification (RFC 8032 section 5.1.7), in extended coordinates --------------
P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)

def recover_x(y, sign):
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    if x2 == 0:  # x = 0: only with sign 0
        return None if sign else 0
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P != 0:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P != 0:
        return None
    if x & 1 != sign:
        x = P - x
    return x

def point_add(p, q):
    a = (p[1] - p[0]) * (q[1] - q[0]) % P
    b = (p[1] + p[0]) * (q[1] + q[0]) % P
    c = 2 * p[3] * q[3] * D % P
    d = 2 * p[2] * q[2] % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)

def point_mul(s, p):
    q = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            q = point_add(q, p)
        p = point_add(p, p)
        s >>= 1
    return q

def compress(p):
    zi = pow(p[2], P - 2, P); x, y = p[0] * zi % P, p[1] * zi % P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")

def decompress(b):
    if len(b) != 32:
        return None
    y = int.from_bytes(b, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    x = recover_x(y, sign)
    return None if x is None else (x, y, 1, x * y % P)

G_Y = 4 * pow(5, P - 2, P) % P
G = (recover_x(G_Y, 0), G_Y, 1, recover_x(G_Y, 0) * G_Y % P)

def ed25519_verify(public, message, signature):
    a, r = decompress(public), decompress(signature[:32]) if len(signature) == 64 else None
    s = int.from_bytes(signature[32:], "little")
    if a is None or r is None or s >= L:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % L
    return compress(point_mul(s, G)) == compress(point_add(r, point_mul(k, a)))

# --- signed notes and checkpoints ----------------------------------------------------
def parse_note(note):
    if not note.endswith("\n"):
        raise ValueError("a note ends in a newline")
    i = note.rfind("\n\n")
    if i < 0:
        return note, []
    sigs = []
    for line in note[i + 2:].splitlines():
        if not line.startswith("\u2014 "):
            raise ValueError("bad signature line: " + line)
        name, blob = line[2:].split(" ")
        raw = base64.b64decode(blob, validate=True)
        sigs.append((name, raw[:4], raw[4:]))
    return note[:i + 1], sigs

def parse_verifier_key(key):
    """(name, key hash, public key) of a verifier key `name+hash+base64(0x01 || key)`."""
    try:
        name, keyhash, vkey = key.split("+", 2)
        raw = base64.b64decode(vkey, validate=True)
    except ValueError:
        raise ValueError("the verifier key is not name+hash+base64")
    if len(raw) != 33 or raw[0] != 1: raise ValueError("not an Ed25519 verifier key")
    want = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4]
    if want.hex() != keyhash: raise ValueError("verifier key hash does not match its key")
    return name, want, raw[1:]

def parse_checkpoint(note, key, label, report=True):
    """(origin, size, root, body) of a checkpoint note. With a key (parse_verifier_key),
    the note must carry a signature by it that verifies; `label` names the checkpoint in
    every refusal. `report` prints what was found of its signatures."""
    try:
        text, sigs = parse_note(note)
        lines = text.split("\n")
        origin, size, root = lines[0], int(lines[1]), base64.b64decode(lines[2], validate=True)
    except (ValueError, IndexError) as e:
        raise ValueError("%s is not a checkpoint note (%s)" % (label, e))
    if str(size) != lines[1] or len(root) != 32: raise ValueError("%s: bad checkpoint body" % label)
    if key:
        name, keyhash, public = key
        mine = [s for s in sigs if s[0] == name and s[1] == keyhash]
        if not mine:
            raise ValueError("%s carries no signature by %s+%s%s" % (label, name, keyhash.hex(),
                             "" if sigs else " (it is unsigned)"))
        for s in mine:
            if not ed25519_verify(public, text.encode(), s[2]):
                raise ValueError("%s: its signature by %s does not verify" % (label, name))
        print("%s: signature by %s: OK" % (label, name))
    elif sigs and report:
        print("%s: signatures present but not checked (no --key): %s" % (label, ", ".join(s[0] for s in sigs)))
    return origin, size, root, text

# --- RFC 9162 proofs -------------------------------------------------------------------
node = lambda left, right: hashlib.sha256(b"\x01" + left + right).digest()

def root_from_inclusion(index, size, leaf, proof):
    if index >= size: raise ValueError("index beyond size")
    inner = (index ^ (size - 1)).bit_length()
    border = bin(index >> inner).count("1")
    if len(proof) != inner + border: raise ValueError("wrong proof length")
    h = leaf
    for i, p in enumerate(proof[:inner]):
        h = node(h, p) if (index >> i) & 1 == 0 else node(p, h)
    for p in proof[inner:]:
        h = node(p, h)
    return h

def verify_consistency(size1, size2, proof, root1, root2):
    if size1 > size2: raise ValueError("size1 > size2")
    if size1 == size2:
        if proof or root1 != root2:
            raise ValueError("equal sizes need equal roots and no proof")
        return
    if size1 == 0:
        if proof:
            raise ValueError("a proof from the empty tree is empty")
        return
    if not proof: raise ValueError("empty proof")
    index = size1 - 1
    inner = (index ^ (size2 - 1)).bit_length()
    border = bin(index >> inner).count("1")
    shift = (size1 & -size1).bit_length() - 1
    inner -= shift
    seed, start = (root1, 0) if size1 == 1 << shift else (proof[0], 1)
    if len(proof) != start + inner + border:
        raise ValueError("wrong proof length")
    proof, mask = proof[start:], index >> shift
    h1 = h2 = seed
    for i in range(inner):
        if (mask >> i) & 1:
            h1, h2 = node(proof[i], h1), node(proof[i], h2)
        else:
            h2 = node(h2, proof[i])
    for p in proof[inner:]:
        h1, h2 = node(p, h1), node(p, h2)
    if h1 != root1 or h2 != root2: raise ValueError("the proof does not lead to the roots")

def b64(s):
    return base64.b64decode(s, validate=True)

def show(root):
    return base64.b64encode(root).decode()

def check_inclusion(doc, key):
    origin, size, root, _ = parse_checkpoint(doc["checkpoint"], key, "the proof's checkpoint")
    if origin != doc["origin"]: raise ValueError("checkpoint of another log")
    leaf = hashlib.sha256(b"\x00" + b64(doc["leafInput"])).digest()
    got = root_from_inclusion(doc["index"], doc["size"], leaf, [b64(p) for p in doc["path"]])
    if got != b64(doc["root"]) or got != root or size != doc["size"]:
        raise ValueError("the inclusion proof does not lead to the checkpoint's root")
    if doc["index"] + 1 != doc["sequence"]: raise ValueError("leaf index and sequence disagree")
    print("inclusion of event %d in %d events: OK" % (doc["sequence"], size))

def check_consistency(doc, key, old_note, old_label):
    """The proof from the verifier's own old checkpoint (`old_note`) to the proof's new one.
    The old checkpoint inside the proof is the prover's word: it only has to agree."""
    origin1, size1, root1, body1 = parse_checkpoint(old_note, key, old_label)
    origin, size, root, _ = parse_checkpoint(doc["checkpoint"], key, "the proof's new checkpoint")
    print("old root: %d events, %s (%s)" % (size1, show(root1), old_label))
    print("new root: %d events, %s (the proof's new checkpoint)" % (size, show(root)))
    if origin != doc["origin"]: raise ValueError("the proof's new checkpoint is of another log")
    if origin1 != origin: raise ValueError("%s is of %s, the proof of %s" % (old_label, origin1, origin))
    _, _, _, embedded = parse_checkpoint(doc["oldCheckpoint"], None, "the proof's old checkpoint", report=False)
    if embedded != body1 or doc["size1"] != size1 or b64(doc["root1"]) != root1:
        raise ValueError("the proof starts from another old checkpoint (%s events, root %s), not %s"
                         % (doc["size1"], doc["root1"], old_label))
    if size != doc["size2"] or root != b64(doc["root2"]):
        raise ValueError("the proof's new checkpoint does not match the proof")
    verify_consistency(size1, size, [b64(p) for p in doc["path"]], root1, root)
    print("consistency %d -> %d events: OK" % (size1, size))

USAGE = 2

def usage(why):
    print("verify_proof.py: %s\n%s" % (why, __doc__), file=sys.stderr)
    return USAGE

def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()

def main(argv):
    key, old = None, None
    while len(argv) >= 2 and argv[0] in ("--key", "--old"):
        if argv[0] == "--key":
            key = argv[1].strip()
        else:
            old = argv[1]
        argv = argv[2:]
    if len(argv) != 1:
        return usage("give one CHECKPOINT or PROOF file, after the options")
    try:
        text = read_text(argv[0])
        old_note = None if old is None else read_text(old)
    except (OSError, UnicodeDecodeError) as e:
        return usage("cannot read %s" % e)
    try:
        doc = json.loads(text) if text.lstrip().startswith("{") else None
        kind = doc.get("type") if isinstance(doc, dict) else None
        if kind == "consistency" and old_note is None:
            return usage("a consistency proof is checked from the checkpoint you kept: --old FILE "
                         "(the old checkpoint inside the proof is the prover's word)")
        if kind != "consistency" and old_note is not None:
            return usage("--old goes with a consistency proof")
        verifier = parse_verifier_key(key) if key else None
        if doc is None:
            origin, size, root, _ = parse_checkpoint(text, verifier, "the checkpoint")
            print("checkpoint of %s: %d events, root %s: OK" % (origin, size, show(root)))
        elif kind == "inclusion":
            check_inclusion(doc, verifier)
        elif kind == "consistency":
            check_consistency(doc, verifier, old_note, "old checkpoint %s" % old)
        else:
            raise ValueError("unknown proof type")
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
        print("FAILED: %s" % e)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Checks what `healthledger checkpoint` and `healthledger --json prove` print, using the
Python standard library only: nothing of HealthLedger's code is trusted.

  verify_proof.py [--key VERIFIER-KEY] CHECKPOINT.txt | PROOF.json (inclusion or consistency)

The verifier key is `name+hash+base64(0x01 || public key)` (`healthledger key generate`).
Without --key, signatures are reported but not checked. Exit 0: all checks; 1: not; 2: usage.
RFC 9162 proofs (transparency-dev/merkle's algorithm), RFC 8032 Ed25519, sumdb/note notes.
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

def parse_checkpoint(note, key, required=True):
    text, sigs = parse_note(note)
    lines = text.split("\n")
    origin, size, root = lines[0], int(lines[1]), base64.b64decode(lines[2], validate=True)
    if str(size) != lines[1] or len(root) != 32: raise ValueError("bad checkpoint body")
    if key:
        name, keyhash, vkey = key.split("+", 2)
        raw = base64.b64decode(vkey, validate=True)
        if raw[0] != 1 or len(raw) != 33: raise ValueError("not an Ed25519 verifier key")
        want = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4]
        if want.hex() != keyhash: raise ValueError("verifier key hash does not match its key")
        mine = [s for s in sigs if s[0] == name and s[1] == want]
        if not mine and required: raise ValueError("no signature by " + name)
        for s in mine:
            if not ed25519_verify(raw[1:], text.encode(), s[2]):
                raise ValueError("signature by %s does not verify" % name)
        print("signature by %s: %s" % (name, "OK" if mine else "absent (an old checkpoint: not required)"))
    elif sigs:
        print("signatures present but not checked (no --key): " + ", ".join(s[0] for s in sigs))
    return origin, size, root

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

def check(doc, key):
    b64 = lambda s: base64.b64decode(s, validate=True)
    origin, size, root = parse_checkpoint(doc["checkpoint"], key)
    if origin != doc["origin"]: raise ValueError("checkpoint of another log")
    if doc["type"] == "inclusion":
        leaf = hashlib.sha256(b"\x00" + b64(doc["leafInput"])).digest()
        got = root_from_inclusion(doc["index"], doc["size"], leaf, [b64(p) for p in doc["path"]])
        if got != b64(doc["root"]) or got != root or size != doc["size"]:
            raise ValueError("the inclusion proof does not lead to the checkpoint's root")
        if doc["index"] + 1 != doc["sequence"]: raise ValueError("leaf index and sequence disagree")
        print("inclusion of event %d in %d events: OK" % (doc["sequence"], size))
    elif doc["type"] == "consistency":
        origin1, size1, root1 = parse_checkpoint(doc["oldCheckpoint"], key, required=False)
        if origin1 != origin or size1 != doc["size1"] or root1 != b64(doc["root1"]):
            raise ValueError("the old checkpoint does not match the proof")
        if size != doc["size2"] or root != b64(doc["root2"]):
            raise ValueError("the checkpoint does not match the proof")
        verify_consistency(size1, size, [b64(p) for p in doc["path"]], root1, root)
        print("consistency %d -> %d events: OK" % (size1, size))
    else:
        raise ValueError("unknown proof type")

def main(argv):
    key = None
    if len(argv) >= 2 and argv[0] == "--key":
        key, argv = argv[1].strip(), argv[2:]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        text = f.read()
    try:
        if text.lstrip().startswith("{"):
            check(json.loads(text), key)
        else:
            origin, size, root = parse_checkpoint(text, key)
            print("checkpoint of %s: %d events, root %s: OK" % (origin, size, base64.b64encode(root).decode()))
    except (ValueError, KeyError, TypeError, IndexError) as e:
        print("FAILED: %s" % e)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

import Foundation
import Testing
import LedgerChecksums
@testable import LedgerLog

struct SigningTests {
    static func hex(_ s: String) -> [UInt8] { MerkleVectorTests.bytes(s) }
    static func hexString(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    /// FIPS 180-4 / NIST examples.
    @Test func sha512Vectors() {
        #expect(Self.hexString(SHA512.hash(Array("abc".utf8))) == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(Self.hexString(SHA512.hash([])) == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e")
        #expect(Self.hexString(SHA512.hash(Array("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8))) == "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909")
        // A million 'a's, fed in uneven pieces.
        var h = SHA512()
        var fed = 0
        var step = 1
        while fed < 1_000_000 {
            let n = min(step, 1_000_000 - fed)
            h.update([UInt8](repeating: 0x61, count: n))
            fed += n
            step = step * 3 % 997 + 1
        }
        #expect(Self.hexString(h.finalize()) == "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b")
    }

    /// RFC 8032 §7.1: TEST 1, 2, 3, 1024 and SHA(abc).
    @Test(arguments: [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7", "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
         "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
        ("f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5", "278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e", SigningTests.test1024,
         "0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03"),
        ("833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42", "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
         "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
         "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"),
    ])
    func ed25519RFC8032(seed: String, publicKey: String, message: String, signature: String) {
        let seed = Self.hex(seed), message = Self.hex(message)
        #expect(Self.hexString(Ed25519.publicKey(seed: seed)) == publicKey)
        let sig = Ed25519.sign(message, seed: seed)
        #expect(Self.hexString(sig) == signature)
        #expect(Ed25519.verify(sig, message: message, publicKey: Self.hex(publicKey)))
        var bad = sig; bad[0] ^= 1
        #expect(!Ed25519.verify(bad, message: message, publicKey: Self.hex(publicKey)))
        bad = sig; bad[40] ^= 0x10
        #expect(!Ed25519.verify(bad, message: message, publicKey: Self.hex(publicKey)))
        #expect(!Ed25519.verify(sig, message: message + [0], publicKey: Self.hex(publicKey)))
        #expect(!Ed25519.verify(Array(sig.dropLast()), message: message, publicKey: Self.hex(publicKey)))
    }

    /// S ≥ ℓ is refused (malleability), from BoringSSL's tests.
    @Test func signatureWithSAboveTheOrderIsRefused() {
        let pk = Self.hex("100fdf47fb94f1536a4f7c3fda27383fa03375a8f527c537e6f1703c47f94f86")
        #expect(Ed25519.verify(Self.hex("dac119d6ca87fc59ae611c157048f4d4fc932a149dbe20ec6effd1436abf83ea05c7df0fef06147241259113909bc71bd3c53ba4464ffcad3c0968f2ffffff0f"),
                               message: Self.hex("124e583f8b8eca58bb29c271b41d36986bbc45541f8e51f9cb0133eca447601e"), publicKey: pk))
        #expect(!Ed25519.verify(Self.hex("0971f86d2c9c78582524a103cb9cf949522ae528f8054dc20107d999be673ff4e25ebf2f2928766b1248bec6e91697775f8446639ede46ad4df4053000000010"),
                                message: Self.hex("6a0bc2b0057cedfc0fa2e3f7f7d39279b30f454a69dfd1117c758d86b19d85e0"), publicKey: pk))
    }

    static let peterNote = "If you think cryptography is the answer to your problem,\n" +
        "then you don't know what your problem is.\n" +
        "\n" +
        "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"

    /// golang.org/x/mod/sumdb/note's published example, both ways.
    @Test func publishedSignedNoteExample() throws {
        let verifier = try SignedNote.Verifier(verifierKey: "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
        #expect(verifier.keyHash == 0xc74f20a3)
        #expect(try SignedNote.verify(Self.peterNote, by: verifier) == true)
        let (text, sigs) = try SignedNote.parse(Self.peterNote)
        #expect(text == "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n")
        #expect(sigs.map(\.name) == ["PeterNeumann"])
        let signer = try SignedNote.Signer(privateKey: "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")
        #expect(signer.verifierKey == "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
        #expect(signer.sign(text) == Self.peterNote)
        #expect(signer.privateKey == "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")
        // A changed text no longer verifies.
        let forged = Self.peterNote.replacingOccurrences(of: "answer", with: "ANSWER")
        #expect(throws: SignedNote.Failure.badSignature(name: "PeterNeumann")) { try SignedNote.verify(forged, by: verifier) }
        // Another key's verifier finds no signature of its own.
        let other = try SignedNote.Signer(name: "EnochRoot", seed: [UInt8](repeating: 7, count: 32))
        #expect(try SignedNote.verify(Self.peterNote, by: try SignedNote.Verifier(verifierKey: other.verifierKey)) == nil)
        #expect(throws: SignedNote.Failure.malformedKey("key hash c74f20a4 does not match the key")) {
            try SignedNote.Verifier(verifierKey: "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
        }
    }

    static let test1024 = """
        08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98fa6e264bf09efe12ee50f8f54e9f77b1e355f6c50544e23fb1433ddf73be84d879de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc1a858efcb8550ee3a5e1998bd177e93a7363c344fe6b199ee5d02e82d522c4feba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbefefd75499da96bd68a8a97b928a8bbc103b6621fcde2beca1231d206be6cd9ec7aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed185ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2d17ba70eb6248e594e1a2297acbbb39d502f1a8c6eb6f1ce22b3de1a1f40cc24554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f27088d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc2732e69485bbc9c90bfbd62481d9089beccf80cfe2df16a2cf65bd92dd597b0707e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128bab27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51addd3b75a2b1ae0784504df543af8969be3ea7082ff7fc9888c144da2af58429ec96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb751fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c42f58c30c04aafdb038dda0847dd988dcda6f3bfd15c4b4c4525004aa06eeff8ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34dff7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08d78ff4ef5d63653a65040cf9bfd4aca7984a74d37145986780fc0b16ac451649de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e488acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a32ef5b52a1ecc820e308aa342721aac0943bf6686b64b2579376504ccc493d97e6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5fb93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b50d334ba77c225bc307ba537152f3f1610e4eafe595f6d9d90d11faa933a15ef1369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380db2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c0618983f8741c5ef68d3a101e8a3b8cac60c905c15fc910840b94c00a0b9d0
        """
}

struct SignedNoteRobustnessTests {
    /// Mutated notes and keys are refused or parsed, never a trap (seeded, a thousand cases).
    @Test func mutatedNotesAndKeysNeverTrap() throws {
        let signer = try SignedNote.Signer(name: "healthledger/test", seed: [UInt8](repeating: 3, count: 32))
        let note = signer.sign(TreeCheckpoint(origin: "healthledger/test", size: 42, root: SHA256.hash([1, 2, 3])).text)
        let verifier = try SignedNote.Verifier(verifierKey: signer.verifierKey)
        #expect(try SignedNote.verify(note, by: verifier) == true)
        #expect(try TreeCheckpoint.parse(note).checkpoint.size == 42)
        var rng = SeededRandom(seed: 15)
        let alphabet = Array("\n —+/=0123456789abcdefABCDEF-".unicodeScalars)
        var accepted = 0
        for _ in 0..<1000 {
            var scalars = Array(note.unicodeScalars)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let i = Int.random(in: 0..<scalars.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: scalars[i] = alphabet[Int.random(in: 0..<alphabet.count, using: &rng)]
                case 1: scalars.remove(at: i)
                default: scalars.insert(alphabet[Int.random(in: 0..<alphabet.count, using: &rng)], at: i)
                }
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            if let ok = try? SignedNote.verify(text, by: verifier), ok == true {
                // Only a change outside the signed text and signature may still verify.
                let (body, _) = try SignedNote.parse(text)
                #expect(body == TreeCheckpoint(origin: "healthledger/test", size: 42, root: SHA256.hash([1, 2, 3])).text)
                accepted += 1
            }
            _ = try? TreeCheckpoint.parse(text)
            _ = try? SignedNote.Verifier(verifierKey: String(text.prefix(80)))
            _ = try? SignedNote.Signer(privateKey: text)
        }
        #expect(accepted < 1000)
    }
}

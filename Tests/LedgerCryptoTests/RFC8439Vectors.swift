/// RFC 8439's test vectors, typed from the RFC's text (hex dumps without their offset
/// and ASCII columns). Where a dump is of text, the tests also check it against the
/// text, so a typing slip in either shows.
enum RFC8439 {
    /// §2.4.2 and §2.8.2: "Ladies and Gentlemen of the class of '99 ..." (114 bytes).
    static let sunscreen = """
        4c 61 64 69 65 73 20 61 6e 64 20 47 65 6e 74 6c
        65 6d 65 6e 20 6f 66 20 74 68 65 20 63 6c 61 73
        73 20 6f 66 20 27 39 39 3a 20 49 66 20 49 20 63
        6f 75 6c 64 20 6f 66 66 65 72 20 79 6f 75 20 6f
        6e 6c 79 20 6f 6e 65 20 74 69 70 20 66 6f 72 20
        74 68 65 20 66 75 74 75 72 65 2c 20 73 75 6e 73
        63 72 65 65 6e 20 77 6f 75 6c 64 20 62 65 20 69
        74 2e
        """
    static let sunscreenText = "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, "
        + "sunscreen would be it."

    /// A.2 #2's plaintext and A.3 #2 and #3's text: the IETF's note (375 bytes).
    static let ietfNote = """
        41 6e 79 20 73 75 62 6d 69 73 73 69 6f 6e 20 74
        6f 20 74 68 65 20 49 45 54 46 20 69 6e 74 65 6e
        64 65 64 20 62 79 20 74 68 65 20 43 6f 6e 74 72
        69 62 75 74 6f 72 20 66 6f 72 20 70 75 62 6c 69
        63 61 74 69 6f 6e 20 61 73 20 61 6c 6c 20 6f 72
        20 70 61 72 74 20 6f 66 20 61 6e 20 49 45 54 46
        20 49 6e 74 65 72 6e 65 74 2d 44 72 61 66 74 20
        6f 72 20 52 46 43 20 61 6e 64 20 61 6e 79 20 73
        74 61 74 65 6d 65 6e 74 20 6d 61 64 65 20 77 69
        74 68 69 6e 20 74 68 65 20 63 6f 6e 74 65 78 74
        20 6f 66 20 61 6e 20 49 45 54 46 20 61 63 74 69
        76 69 74 79 20 69 73 20 63 6f 6e 73 69 64 65 72
        65 64 20 61 6e 20 22 49 45 54 46 20 43 6f 6e 74
        72 69 62 75 74 69 6f 6e 22 2e 20 53 75 63 68 20
        73 74 61 74 65 6d 65 6e 74 73 20 69 6e 63 6c 75
        64 65 20 6f 72 61 6c 20 73 74 61 74 65 6d 65 6e
        74 73 20 69 6e 20 49 45 54 46 20 73 65 73 73 69
        6f 6e 73 2c 20 61 73 20 77 65 6c 6c 20 61 73 20
        77 72 69 74 74 65 6e 20 61 6e 64 20 65 6c 65 63
        74 72 6f 6e 69 63 20 63 6f 6d 6d 75 6e 69 63 61
        74 69 6f 6e 73 20 6d 61 64 65 20 61 74 20 61 6e
        79 20 74 69 6d 65 20 6f 72 20 70 6c 61 63 65 2c
        20 77 68 69 63 68 20 61 72 65 20 61 64 64 72 65
        73 73 65 64 20 74 6f
        """
    static let ietfNoteText = "Any submission to the IETF intended by the Contributor for publication as all or part of an IETF "
        + "Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an "
        + "\"IETF Contribution\". Such statements include oral statements in IETF sessions, as well as written and "
        + "electronic communications made at any time or place, which are addressed to"

    /// A.2 #3's plaintext and A.3 #4's text: Jabberwocky (127 bytes).
    static let jabberwocky = """
        27 54 77 61 73 20 62 72 69 6c 6c 69 67 2c 20 61
        6e 64 20 74 68 65 20 73 6c 69 74 68 79 20 74 6f
        76 65 73 0a 44 69 64 20 67 79 72 65 20 61 6e 64
        20 67 69 6d 62 6c 65 20 69 6e 20 74 68 65 20 77
        61 62 65 3a 0a 41 6c 6c 20 6d 69 6d 73 79 20 77
        65 72 65 20 74 68 65 20 62 6f 72 6f 67 6f 76 65
        73 2c 0a 41 6e 64 20 74 68 65 20 6d 6f 6d 65 20
        72 61 74 68 73 20 6f 75 74 67 72 61 62 65 2e
        """
    static let jabberwockyText = "'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\n"
        + "All mimsy were the borogoves,\nAnd the mome raths outgrabe."

    /// The key 00 01 02 … 1f of §2.3.2 and §2.4.2.
    static let countingKey = """
        00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f
        10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f
        """
    /// The key 80 81 … 9f of §2.6.2 and §2.8.2.
    static let highKey = """
        80 81 82 83 84 85 86 87 88 89 8a 8b 8c 8d 8e 8f
        90 91 92 93 94 95 96 97 98 99 9a 9b 9c 9d 9e 9f
        """
    /// The key of A.2 #3, A.3 #4 (as a Poly1305 key), A.4 #3 and A.5.
    static let appendixKey = """
        1c 92 40 a5 eb 55 d3 8a f3 33 88 86 04 f6 b5 f0
        47 39 17 c1 40 2b 80 09 9d ca 5c bc 20 70 75 c0
        """
    static let zeroKey = String(repeating: "00 ", count: 32)
    /// The key 00 … 00 01 of A.1 #3, A.2 #2 and A.4 #2.
    static let oneKey = String(repeating: "00 ", count: 31) + "01"
    static let zeroNonce = String(repeating: "00 ", count: 12)
    /// The nonce 00 … 00 02 of A.1 #5, A.2 #2–#3 and A.4 #2–#3.
    static let twoNonce = String(repeating: "00 ", count: 11) + "02"
}

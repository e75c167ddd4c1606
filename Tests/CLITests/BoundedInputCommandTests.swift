import Testing

/// Input that used to kill the process is refused with exit 3.
struct BoundedInputCommandTests {
    @Test func aUnitNested20000DeepIsRefusedNotACrash() throws {
        let text = String(repeating: "(", count: 20_000) + "kg" + String(repeating: ")", count: 20_000)
        let r = try CLIRunner.run(["unit", "parse", text])
        #expect(r.status == 3)
        #expect(r.stdout == "")
        #expect(r.stderr.hasPrefix("healthledger: unitSyntax: '((((((((((((((((((((((((((((((((…' at byte 256: unit string longer than 256 bytes"))
        let nested = String(repeating: "(", count: 20) + "kg" + String(repeating: ")", count: 20)
        let n = try CLIRunner.run(["unit", "parse", nested])
        #expect(n.status == 3)
        #expect(n.stderr == "healthledger: unitSyntax: '\(nested)' at byte 16: parentheses nested deeper than 16\n")
    }

    @Test func replayAsOfAnInstantOutsideTheLogsClockIsExit3() throws {
        let dir = try StoreCommandTests.prepared()
        let before = try StoreCommandTests.contents(dir)
        let cases = [
            ("1600-01-01T00:00:00Z", "healthledger: dateOutOfRange: --as-of 1600-01-01T00:00:00Z is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z (the log's clock)\n"),
            ("2300-01-01T00:00:00Z", "healthledger: dateOutOfRange: --as-of 2300-01-01T00:00:00Z is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z (the log's clock)\n"),
            ("9999-12-31T23:59:60Z", "healthledger: invalidDate: --as-of '9999-12-31T23:59:60Z' is outside 0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z\n"),
            ("0000-01-01T00:00:00Z", "healthledger: invalidDate: --as-of '0000-01-01T00:00:00Z' is outside 0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z\n"),
            ("2026-01-01T00:00:00", "healthledger: invalidDate: --as-of '2026-01-01T00:00:00' has no UTC offset: add Z or ±HH:MM\n"),
        ]
        for (instant, message) in cases {
            let r = try CLIRunner.run(["--ledger", dir.path, "replay", "--as-of", instant])
            #expect(r.status == 3, "\(instant)")
            #expect(r.stderr == message)
        }
        let fine = try CLIRunner.run(["--ledger", dir.path, "replay", "--as-of", "2262-04-11T23:47:16Z"])
        #expect(fine.status == 0)
        #expect(try StoreCommandTests.contents(dir) == before)
    }
}

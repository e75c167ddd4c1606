import Foundation
import HealthModel
import LedgerCore

/// A query's samples as an `AsyncSequence`, read a page at a time: each page is one
/// atomic read of the ledger (`SampleReader`), the next resumes after the last
/// sample of the one before, so the sequence yields every matching sample exactly
/// once even while others write. Memory: one page.
public struct SampleStream: AsyncSequence, Sendable {
    public typealias Element = Sample

    let query: SampleQuery
    let pageSize: Int
    let fetch: @Sendable (SampleQuery, UUID?) async throws -> SamplePage

    init(query: SampleQuery, pageSize: Int, fetch: @escaping @Sendable (SampleQuery, UUID?) async throws -> SamplePage) {
        self.query = query
        self.pageSize = Swift.max(1, pageSize)
        self.fetch = fetch
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(stream: self, remaining: query.limit > 0 ? query.limit : Int.max)
    }

    /// Yields the buffered page, then fetches the next.
    public struct Iterator: AsyncIteratorProtocol {
        let stream: SampleStream
        var remaining: Int
        var buffer: [Sample] = []
        var index = 0
        var after: UUID?
        var finished = false

        init(stream: SampleStream, remaining: Int) {
            self.stream = stream
            self.remaining = remaining
        }

        public mutating func next() async throws -> Sample? {
            while index == buffer.count {
                guard !finished, remaining > 0 else { return nil }
                var q = stream.query
                q.limit = Swift.min(stream.pageSize, remaining)
                let page = try await stream.fetch(q, after)
                buffer = page.samples
                index = 0
                after = page.next
                finished = page.next == nil
                remaining -= buffer.count
                if buffer.isEmpty { return nil }
            }
            defer { index += 1 }
            return buffer[index]
        }
    }
}

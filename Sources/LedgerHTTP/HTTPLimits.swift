/// What one connection may send and how long it may take (each refusal has its
/// status: 414, 431, 413, 408). Defaults suit a health-data service on one machine.
public struct HTTPLimits: Sendable, Equatable {
    /// The request line (method, target, version) at most this long: 414.
    public var requestLineMax: Int = 8 << 10
    /// The request line and every header field together at most this long: 431.
    public var headBytesMax: Int = 16 << 10
    /// At most this many header fields: 431.
    public var headerCountMax: Int = 100
    /// A body at most this long (declared or de-chunked): 413.
    public var bodyBytesMax: Int = 16 << 20
    /// A chunk-size line (size and extensions) at most this long: 400.
    public var chunkLineMax: Int = 1 << 10
    /// Open connections at most; one more is answered 503 and closed.
    public var connectionsMax: Int = 1024
    /// From a request's first byte to the end of its head (slowloris): 408 and closed.
    public var headSeconds: Double = 10
    /// From the end of a head to the end of its body: 408 and closed.
    public var bodySeconds: Double = 60
    /// A kept-alive connection with no request for this long is closed.
    public var idleSeconds: Double = 60
    /// A response that makes no progress towards a client for this long is given up
    /// (the connection closed).
    public var writeStallSeconds: Double = 30

    public init() {}
}

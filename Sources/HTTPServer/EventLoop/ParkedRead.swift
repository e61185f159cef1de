import PortcullisCore

/// How the epoll driver follows a channel's interest when the channel only stops reading for a while.
///
/// A connection whose exchange waits on something else — a proxied request waiting for its upstream — drops
/// its read interest until the response is out, then asks for it again: for a keep-alive client that sends
/// nothing until it has its answer, a delete and an add in the epoll set per request (`epoll_ctl` was ~3 % of a
/// proxied metadata GET's CPU) for an event that never comes. So a dropped read stays in the set, *parked*:
/// nothing changes while the client is quiet, taking the interest back costs nothing, and the first event a
/// parked read brings (a pipelined request, a hang-up) removes it then, unheard by the channel. The channel
/// hears exactly the readiness of the interest it asked for, as when the set followed it at once.
///
/// Only a read is parked: a socket is writable almost always, so a dropped write left in a level-triggered set
/// would bring an event at once.
enum ParkedRead {
    /// The interest the set must hold after the channel asked for `wanted` while it holds `inSet`; nil when
    /// the set stays as it is (the same interest, or a read parked).
    static func setInterest(inSet: IOInterest, wanted: IOInterest) -> IOInterest? {
        if inSet == wanted { return nil }
        if inSet.isSuperset(of: wanted), inSet.subtracting(wanted) == .read { return nil }
        return wanted
    }

    /// An event on a channel whose set interest is `inSet` while it wants `wanted`: the set's new interest (nil:
    /// unchanged) and the readiness to hand the channel (nil: none it asked for).
    static func event(
        _ readiness: Readiness, inSet: IOInterest, wanted: IOInterest
    ) -> (setInterest: IOInterest?, deliver: Readiness?) {
        guard inSet != wanted else { return (nil, readiness) }
        var deliver = readiness
        if !wanted.contains(.read) { deliver.remove(.readable) }
        if !wanted.contains(.write) { deliver.remove(.writable) }
        let heard =
            !wanted.isEmpty && (deliver.contains(.readable) || deliver.contains(.writable) || deliver.contains(.failed))
        return (wanted, heard ? deliver : nil)
    }
}

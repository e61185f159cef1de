import PortcullisCore
import Storage

#if canImport(Glibc)
import Glibc
#endif

/// `portcullis events list --dir DIR [--dead]` and `portcullis events redeliver --dir DIR ID…`: the embedded
/// outbox for operators (docs/events.md). Works while servers run on the directory.
enum EventsCommand {
    static let help = """
        portcullis events list --dir DIR [--dead]
            Events of the embedded directory DIR waiting for delivery, one line per delivery (tab-separated:
            id, type, bucket, object, commit time, webhook, attempts, next attempt, last error); with --dead,
            only dead-lettered deliveries.
        portcullis events redeliver --dir DIR ID...
            Make the dead-lettered deliveries of events ID... live again (a fresh retry window).
        """

    static func run(_ arguments: [String]) -> Never {
        guard let sub = arguments.first, sub == "list" || sub == "redeliver" else {
            if arguments.first == "--help" || arguments.first == "-h" {
                Terminal.print(help)
                exit(0)
            }
            Terminal.fail(
                "usage: portcullis events list --dir DIR [--dead] | portcullis events redeliver --dir DIR ID...")
        }
        var directory: String?
        var dead = false
        var ids: [String] = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "--dir":
                guard index < arguments.count else { Terminal.fail("--dir needs a directory") }
                directory = arguments[index]
                index += 1
            case _ where argument.hasPrefix("--dir="):
                directory = String(argument.dropFirst(6))
            case "--dead" where sub == "list":
                dead = true
            case "--help", "-h":
                Terminal.print(help)
                exit(0)
            case _ where argument.hasPrefix("-"):
                Terminal.fail("unknown option \(argument) for events \(sub)")
            default:
                guard sub == "redeliver" else {
                    Terminal.fail("events list takes no arguments besides --dir and --dead")
                }
                ids.append(argument)
            }
        }
        guard let directory, !directory.isEmpty else { Terminal.fail("events \(sub) needs --dir DIR") }
        let admin: EventOutboxAdmin
        do {
            admin = try EventOutboxAdmin(directory: directory)
        } catch {
            Terminal.fail("--dir \(directory): \(error)")
        }
        if sub == "list" {
            do {
                for entry in try admin.list(deadOnly: dead) { Terminal.print(line(entry)) }
            } catch {
                Terminal.fail("events list: \(error)", code: 1)
            }
            exit(0)
        }
        guard !ids.isEmpty else { Terminal.fail("events redeliver needs at least one event id") }
        let counts: [Int]
        do {
            counts = try admin.redeliver(ids)
        } catch {
            Terminal.fail("events redeliver: \(error)", code: 1)
        }
        var missing = 0
        for (id, count) in zip(ids, counts) {
            if count == 0 {
                missing += 1
                Terminal.printError("portcullis: \(id): no dead-lettered delivery with this id")
            } else {
                Terminal.print("\(id): \(count) \(count == 1 ? "delivery" : "deliveries") queued again")
            }
        }
        exit(missing == 0 ? 0 : 1)
    }

    /// One tab-separated line; the object name is shown with tabs and newlines escaped.
    static func line(_ entry: OutboxEntry) -> String {
        var name = ""
        for scalar in entry.name.unicodeScalars {
            switch scalar {
            case "\\": name += "\\\\"
            case "\t": name += "\\t"
            case "\n": name += "\\n"
            default: name.unicodeScalars.append(scalar)
            }
        }
        let type = ChangeKind(rawValue: entry.kind)?.cloudEventType ?? entry.kind
        let state = entry.webhook == nil ? "-" : (entry.deadLettered ? "dead" : (entry.due?.rfc3339Milliseconds ?? "-"))
        return [
            entry.id, type, entry.bucket, name, entry.time.rfc3339Milliseconds, entry.webhook ?? "-",
            String(entry.attempts), state, entry.lastError ?? "-",
        ].joined(separator: "\t")
    }
}

/// Header and list values without surrounding optional whitespace (RFC 9110 OWS: spaces and tabs).
extension Substring {
    func trimmingSpaces() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

extension String {
    func trimmingSpaces() -> String { self[...].trimmingSpaces() }
}

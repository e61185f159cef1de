/// Text made safe inside XML or HTML: as element content and inside a double-quoted attribute value.
public enum MarkupEscaping {
    /// `text` with `&`, `<`, `>` and `"` written as entities (what S3 requests carry as XML and what an HTML
    /// attribute holds).
    public static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}

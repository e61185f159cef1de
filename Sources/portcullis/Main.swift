@main
struct PortcullisMain {
    static func main() {
        print("portcullis: under construction")
    }
}

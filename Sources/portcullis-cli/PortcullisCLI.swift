@main struct CLI { static func main() {} }

import Gateway
import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// `portcullis serve`: parse and validate the configuration (exit 2 on a bad value), read key files, build
/// backends, authentication, rules and the responder, start listening, then wait for signals.
enum ServeCommand {
    static func run(_ arguments: [String]) async -> Never {
        if arguments.contains("--help") || arguments.contains("-h") {
            Terminal.print(HelpText.serve)
            exit(0)
        }
        let environment = ProcessEnvironment.current()
        AllocatorTuning.apply(environment: environment)
        let config: GatewayConfiguration
        do {
            config = try ConfigurationParser.parse(arguments: arguments, environment: environment)
        } catch {
            Terminal.fail(error.description)
        }
        let secrets = ServeSecrets.load(config)
        let rulesSource = RulesLoader.preflight(config)
        let logger = Logger(sink: StreamLogSink(descriptor: 2, format: config.logFormat), minimumLevel: config.logLevel)
        await ServerRunner.run(config: config, secrets: secrets, rulesSource: rulesSource, logger: logger)
    }
}

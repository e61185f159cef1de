import Events
import Testing

@testable import Gateway

/// `--events-webhook` / `PORTCULLIS_EVENTS_WEBHOOKS` and `--events-secret` (docs/configuration.md, docs/events.md).
@Suite struct ConfigurationEventsTests {
    @Test func noWebhooksByDefault() throws {
        let config = try ConfigurationParser.parse(arguments: [], environment: [:])
        #expect(config.eventWebhooks.isEmpty)
        #expect(config.eventsSecretFile == nil)
    }

    @Test func repeatedFlagsKeepTheirOrderAndWinOverTheEnvironment() throws {
        let config = try ConfigurationParser.parse(
            arguments: [
                "--events-webhook", "http://127.0.0.1:9/a", "--events-webhook=https://hooks.example.com/b?k=v",
                "--events-secret", "events.secret",
            ],
            environment: ["PORTCULLIS_EVENTS_WEBHOOKS": "http://ignored/"])
        #expect(config.eventWebhooks.map(\.url) == ["http://127.0.0.1:9/a", "https://hooks.example.com/b?k=v"])
        #expect(config.eventWebhooks.map(\.label) == ["http://127.0.0.1:9/a", "https://hooks.example.com/b"])
        #expect(config.eventsSecretFile == "events.secret")
    }

    @Test func environmentListIsCommaSeparated() throws {
        let config = try ConfigurationParser.parse(
            arguments: [],
            environment: [
                "PORTCULLIS_EVENTS_WEBHOOKS": " http://a:1/x , http://b:2/y,",
                "PORTCULLIS_EVENTS_SECRET_FILE": "/run/secrets/events",
            ])
        #expect(config.eventWebhooks.map(\.url) == ["http://a:1/x", "http://b:2/y"])
        #expect(config.eventsSecretFile == "/run/secrets/events")
    }

    @Test(arguments: ["ftp://x/", "http://", "localhost:8080/hook", "http://h:0/", "http://h/#f"])
    func badURLsAreConfigurationErrors(_ url: String) {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationParser.parse(arguments: ["--events-webhook", url], environment: [:])
        }
    }

    @Test func theSameWebhookTwiceIsAnError() {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationParser.parse(
                arguments: ["--events-webhook", "http://a/", "--events-webhook", "http://a/"],
                environment: [:])
        }
    }
}

/// The v0 API is the application behind `GatewayResponder`.
extension V0API: APIHandling {}

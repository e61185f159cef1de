import HTTPServer
import PortcullisCore
import Service

/// The parts of the Cloud Storage JSON API this gateway does not serve, each routed so that it answers
/// **501 `notImplemented`** naming the feature, in the JSON API's error shape — never a 404, which Google's
/// clients read as "the object does not exist" (`make_public()` raising NotFound, a batch of deletes believed
/// done).
///
/// Access is decided by the rules (and the admin key), so ACLs, IAM policies and HMAC keys have nothing to
/// hold; notifications are the change-event webhooks (`--events-webhook`); buckets are configuration.
enum JSONUnserved {
    /// One unserved feature: its name as the message gives it, the paths that reach it and their methods.
    struct Feature {
        let name: String
        let methods: [HTTPMethod]
        let templates: [String]

        init(_ name: String, methods: [HTTPMethod] = JSONUnserved.all, _ templates: String...) {
            self.name = name
            self.methods = methods
            self.templates = templates
        }
    }

    static let all: [HTTPMethod] = [.get, .post, .put, .patch, .delete]

    static let features: [Feature] = [
        Feature(
            "Bucket ACLs (bucketAccessControls)", "/storage/v1/b/{bucket}/acl", "/storage/v1/b/{bucket}/acl/{entity}"),
        Feature(
            "Default object ACLs (defaultObjectAccessControls)", "/storage/v1/b/{bucket}/defaultObjectAcl",
            "/storage/v1/b/{bucket}/defaultObjectAcl/{entity}"),
        Feature("Bucket IAM policies", "/storage/v1/b/{bucket}/iam", "/storage/v1/b/{bucket}/iam/testPermissions"),
        Feature(
            "Pub/Sub notifications (use the change-event webhooks)", "/storage/v1/b/{bucket}/notificationConfigs",
            "/storage/v1/b/{bucket}/notificationConfigs/{notification}"),
        Feature("Retention policies", "/storage/v1/b/{bucket}/lockRetentionPolicy"),
        Feature("Object change channels", methods: [.post], "/storage/v1/b/{bucket}/o/watch"),
        Feature("Object change channels", "/storage/v1/channels/stop"),
        Feature(
            "Soft delete and restore", methods: [.post], "/storage/v1/b/{bucket}/o/bulkRestore",
            "/storage/v1/b/{bucket}/o/{object}/restore"),
        Feature(
            "Object ACLs (objectAccessControls)", "/storage/v1/b/{bucket}/o/{object}/acl",
            "/storage/v1/b/{bucket}/o/{object}/acl/{entity}"),
        Feature(
            "HMAC keys", "/storage/v1/projects/{project}/hmacKeys", "/storage/v1/projects/{project}/hmacKeys/{accessId}"
        ),
        Feature("Project service accounts", "/storage/v1/projects/{project}/serviceAccount"),
    ]

    /// The features' paths as routes of the JSON API table: each decoder throws the 501.
    static var routes: [Route<JSONRouter.Decoder>] {
        features.flatMap { feature in
            feature.templates.map { template in
                let name = feature.name
                return Route(feature.methods, RouteTemplate(static: template)) { _, _, _ in throw notServed(name) }
            }
        }
    }

    /// 501 naming `feature`.
    static func notServed(_ feature: String) -> ServiceError {
        ServiceError(.notImplemented, "\(feature): not implemented by this gateway.")
    }
}

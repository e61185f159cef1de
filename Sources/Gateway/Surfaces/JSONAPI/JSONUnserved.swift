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
    /// One unserved path: its methods, template and the feature's name as the message gives it.
    struct Entry {
        let methods: [HTTPMethod]
        let template: String
        let feature: String
    }

    static let all: [HTTPMethod] = [.get, .post, .put, .patch, .delete]

    static let entries: [Entry] = [
        Entry(methods: all, template: "/storage/v1/b/{bucket}/acl", feature: "Bucket ACLs (bucketAccessControls)"),
        Entry(
            methods: all, template: "/storage/v1/b/{bucket}/acl/{entity}",
            feature: "Bucket ACLs (bucketAccessControls)"),
        Entry(
            methods: all, template: "/storage/v1/b/{bucket}/defaultObjectAcl",
            feature: "Default object ACLs (defaultObjectAccessControls)"),
        Entry(
            methods: all, template: "/storage/v1/b/{bucket}/defaultObjectAcl/{entity}",
            feature: "Default object ACLs (defaultObjectAccessControls)"),
        Entry(methods: all, template: "/storage/v1/b/{bucket}/iam", feature: "Bucket IAM policies"),
        Entry(methods: all, template: "/storage/v1/b/{bucket}/iam/testPermissions", feature: "Bucket IAM policies"),
        Entry(
            methods: all, template: "/storage/v1/b/{bucket}/notificationConfigs",
            feature: "Pub/Sub notifications (use the change-event webhooks)"),
        Entry(
            methods: all, template: "/storage/v1/b/{bucket}/notificationConfigs/{notification}",
            feature: "Pub/Sub notifications (use the change-event webhooks)"),
        Entry(
            methods: all, template: "/storage/v1/b/{bucket}/lockRetentionPolicy", feature: "Retention policies"),
        Entry(methods: [.post], template: "/storage/v1/b/{bucket}/o/watch", feature: "Object change channels"),
        Entry(methods: all, template: "/storage/v1/channels/stop", feature: "Object change channels"),
        Entry(methods: [.post], template: "/storage/v1/b/{bucket}/o/bulkRestore", feature: "Soft delete and restore"),
        Entry(
            methods: [.post], template: "/storage/v1/b/{bucket}/o/{object}/restore", feature: "Soft delete and restore"
        ),
        Entry(
            methods: all, template: "/storage/v1/b/{bucket}/o/{object}/acl",
            feature: "Object ACLs (objectAccessControls)"),
        Entry(
            methods: all, template: "/storage/v1/b/{bucket}/o/{object}/acl/{entity}",
            feature: "Object ACLs (objectAccessControls)"),
        Entry(methods: all, template: "/storage/v1/projects/{project}/hmacKeys", feature: "HMAC keys"),
        Entry(methods: all, template: "/storage/v1/projects/{project}/hmacKeys/{accessId}", feature: "HMAC keys"),
        Entry(
            methods: all, template: "/storage/v1/projects/{project}/serviceAccount",
            feature: "Project service accounts"),
    ]

    /// The entries as routes of the JSON API table: each decoder throws the 501.
    static var routes: [Route<JSONRouter.Decoder>] {
        entries.map { entry in
            let feature = entry.feature
            return Route(entry.methods, RouteTemplate(static: entry.template)) { _, _, _ in
                throw notServed(feature)
            }
        }
    }

    /// 501 naming `feature`.
    static func notServed(_ feature: String) -> ServiceError {
        ServiceError(.notImplemented, "\(feature): not implemented by this gateway.")
    }
}

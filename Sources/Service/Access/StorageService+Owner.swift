import PortcullisCore

extension StorageService {
    /// Who a write is recorded as having made it, as Cloud Storage names an object's owner (`user-ID`): a
    /// service account's email (its credentials carry it as the `email` claim), else the signed-in caller's uid.
    /// Anonymous and admin-key writes record none: neither is an identity an owner field could name.
    static func ownerEntity(_ principal: Principal?) -> String? {
        guard let principal else { return nil }
        if principal.isAdmin {
            guard case .string(let email)? = principal.claims["email"] else { return nil }
            return "user-" + email
        }
        return "user-" + principal.uid
    }
}

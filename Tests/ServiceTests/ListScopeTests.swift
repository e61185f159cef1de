import Testing

@testable import Service

/// `ListScope.candidates`: the folders a listing of a prefix is judged on, in order.
@Suite struct ListScopeTests {
    @Test func aPrefixEndingInASlashIsJudgedOnItsFolderOnly() {
        #expect(ListScope.candidates(prefix: "") == [ListScope(folder: "")])
        #expect(ListScope.candidates(prefix: "a/b/") == [ListScope(folder: "a/b")])
        #expect(ListScope.candidates(prefix: "a//") == [ListScope(folder: "a")])
    }

    @Test func aPrefixNamingAFolderIsJudgedOnItsParentThenOnItselfConfined() {
        #expect(
            ListScope.candidates(prefix: "shared")
                == [ListScope(folder: ""), ListScope(folder: "shared", confinedTo: "shared/")])
        #expect(
            ListScope.candidates(prefix: "a/ca")
                == [ListScope(folder: "a"), ListScope(folder: "a/ca", confinedTo: "a/ca/")])
    }

    @Test func aConfinedScopeShowsOnlyWhatLiesInside() {
        let scope = ListScope(folder: "shared", confinedTo: "shared/")
        #expect(scope.shows("shared/") && scope.shows("shared/a.txt"))
        #expect(!scope.shows("shared") && !scope.shows("shared-secret/") && !scope.shows("sharedfile"))
        #expect(ListScope(folder: "").shows("anything"))
    }
}

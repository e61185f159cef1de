// Compiled only in fuzz builds (`PORTCULLIS_FUZZ_BUILD=1`, Package.swift), in place of the source the
// console-assets plugin generates: fuzz targets exercise routing and wire formats, never the console's files.
extension ConsoleAssetCatalog {
    static let embeddedFiles: [(name: String, text: StaticString)] = []
}

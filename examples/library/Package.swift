// swift-tools-version: 6.0
// A program that links iconr's library. Here it depends on the checkout two folders up; in a
// project of your own, depend on a checkout or a commit until a release is tagged:
//     .package(url: "https://example.com/iconr.git", revision: "<commit>")
// and on a release once one is (docs/development.md, "Releases"):
//     .package(url: "https://example.com/iconr.git", from: "0.1.0")
import PackageDescription

let package = Package(
    name: "flag-icons",
    dependencies: [.package(name: "iconr", path: "../..")],
    targets: [
        .executableTarget(
            name: "flag-icons",
            dependencies: [
                .product(name: "Iconr", package: "iconr"),
                // The style engine, for icons a style layer shows for a feature.
                .product(name: "IconrStyle", package: "iconr"),
            ])
    ]
)

/// iconr's version, shown by `iconr --version` and part of cache keys.
package enum IconrVersion {
    package static let string = "0.1.0"
}

/// iconr's version, shown by `iconr --version` and part of cache keys.
public enum IconrVersion {
    public static let string = "0.1.0"
}

extension Double {
    /// The number as people and JSON write it: `2` for a whole number, else Swift's
    /// shortest round-trip form (`1.5`, `0.25`). Used for scales in file names and keys,
    /// numbers in sprite indexes and styles, and `to-string`.
    package var shortText: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}

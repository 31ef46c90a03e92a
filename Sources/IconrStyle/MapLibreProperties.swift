import IconrCore

/// The layout and paint properties of the MapLibre style specification (version 8, as MapLibre
/// GL JS 5.3 carries it; MapLibre Native reads the same): for each layer type, the properties
/// it has and what each takes. GL JS rejects a style with a property its layer type lacks or a
/// value of another type. `Tests/MapLibre/spec_table.py` prints this table from GL JS itself,
/// and a test compares the two.
package enum MapLibreProperties {
    /// MapLibre's layer types.
    static let layerTypes: Set<String> = Set(specifications.keys.map { String($0.split(separator: ".")[0]) })

    /// The specification of `layout` or `paint` (`group`) property `name` of `layerType`
    /// layers, or nil when MapLibre has no such property there.
    static func specification(layerType: String, group: String, name: String) -> PropertySpecification? {
        specifications["\(layerType).\(group).\(name)"]
    }

    /// `listing`, keyed `type.group.name`.
    private static let specifications: [String: PropertySpecification] = {
        var result: [String: PropertySpecification] = [:]
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 6 else { continue }
            let type = fields[3].split(separator: "/").map(String.init)
            var specification = PropertySpecification(
                type: type[0], value: type.count > 1 ? type[1] : nil, length: type.count > 2 ? Int(type[2]) : nil,
                propertyType: fields[4],
                parameters: fields[5] == "-" ? [] : fields[5].split(separator: ",").map(String.init),
                interpolated: fields.contains("interpolated"), tokens: fields.contains("tokens"))
            if let values = fields.first(where: { $0.hasPrefix("values=") }) {
                specification.enumValues = values.dropFirst("values=".count).split(separator: "|").map(String.init)
            }
            result["\(fields[0]).\(fields[1]).\(fields[2])"] = specification
        }
        return result
    }()

    /// One property per line: `<layer type> <layout|paint> <name> <type>[/<item type>[/<length>]]
    /// <property-type> <expression parameters, or -> [interpolated] [tokens] [values=a|b|...]`.
    package static let listing = """
        background layout visibility enum constant - values=visible|none
        fill layout fill-sort-key number data-driven zoom,feature
        fill layout visibility enum constant - values=visible|none
        circle layout circle-sort-key number data-driven zoom,feature
        circle layout visibility enum constant - values=visible|none
        heatmap layout visibility enum constant - values=visible|none
        fill-extrusion layout visibility enum constant - values=visible|none
        line layout line-cap enum data-constant zoom values=butt|round|square
        line layout line-join enum data-driven zoom,feature values=bevel|round|miter
        line layout line-miter-limit number data-constant zoom interpolated
        line layout line-round-limit number data-constant zoom interpolated
        line layout line-sort-key number data-driven zoom,feature
        line layout visibility enum constant - values=visible|none
        symbol layout symbol-placement enum data-constant zoom values=point|line|line-center
        symbol layout symbol-spacing number data-constant zoom interpolated
        symbol layout symbol-avoid-edges boolean data-constant zoom
        symbol layout symbol-sort-key number data-driven zoom,feature
        symbol layout symbol-z-order enum data-constant zoom values=auto|viewport-y|source
        symbol layout icon-allow-overlap boolean data-constant zoom
        symbol layout icon-overlap enum data-constant zoom values=never|always|cooperative
        symbol layout icon-ignore-placement boolean data-constant zoom
        symbol layout icon-optional boolean data-constant zoom
        symbol layout icon-rotation-alignment enum data-constant zoom values=map|viewport|auto
        symbol layout icon-size number data-driven zoom,feature interpolated
        symbol layout icon-text-fit enum data-constant zoom values=none|width|height|both
        symbol layout icon-text-fit-padding array/number/4 data-constant zoom interpolated
        symbol layout icon-image resolvedImage data-driven zoom,feature tokens
        symbol layout icon-rotate number data-driven zoom,feature interpolated
        symbol layout icon-padding padding data-driven zoom,feature interpolated
        symbol layout icon-keep-upright boolean data-constant zoom
        symbol layout icon-offset array/number/2 data-driven zoom,feature interpolated
        symbol layout icon-anchor enum data-driven zoom,feature values=center|left|right|top|bottom|top-left|top-right|bottom-left|bottom-right
        symbol layout icon-pitch-alignment enum data-constant zoom values=map|viewport|auto
        symbol layout text-pitch-alignment enum data-constant zoom values=map|viewport|auto
        symbol layout text-rotation-alignment enum data-constant zoom values=map|viewport|viewport-glyph|auto
        symbol layout text-field formatted data-driven zoom,feature tokens
        symbol layout text-font array/string data-driven zoom,feature
        symbol layout text-size number data-driven zoom,feature interpolated
        symbol layout text-max-width number data-driven zoom,feature interpolated
        symbol layout text-line-height number data-constant zoom interpolated
        symbol layout text-letter-spacing number data-driven zoom,feature interpolated
        symbol layout text-justify enum data-driven zoom,feature values=auto|left|center|right
        symbol layout text-radial-offset number data-driven zoom,feature interpolated
        symbol layout text-variable-anchor array/enum data-constant zoom values=center|left|right|top|bottom|top-left|top-right|bottom-left|bottom-right
        symbol layout text-variable-anchor-offset variableAnchorOffsetCollection data-driven zoom,feature interpolated
        symbol layout text-anchor enum data-driven zoom,feature values=center|left|right|top|bottom|top-left|top-right|bottom-left|bottom-right
        symbol layout text-max-angle number data-constant zoom interpolated
        symbol layout text-writing-mode array/enum data-constant zoom values=horizontal|vertical
        symbol layout text-rotate number data-driven zoom,feature interpolated
        symbol layout text-padding number data-constant zoom interpolated
        symbol layout text-keep-upright boolean data-constant zoom
        symbol layout text-transform enum data-driven zoom,feature values=none|uppercase|lowercase
        symbol layout text-offset array/number/2 data-driven zoom,feature interpolated
        symbol layout text-allow-overlap boolean data-constant zoom
        symbol layout text-overlap enum data-constant zoom values=never|always|cooperative
        symbol layout text-ignore-placement boolean data-constant zoom
        symbol layout text-optional boolean data-constant zoom
        symbol layout visibility enum constant - values=visible|none
        raster layout visibility enum constant - values=visible|none
        hillshade layout visibility enum constant - values=visible|none
        fill paint fill-antialias boolean data-constant zoom
        fill paint fill-opacity number data-driven zoom,feature,feature-state interpolated
        fill paint fill-color color data-driven zoom,feature,feature-state interpolated
        fill paint fill-outline-color color data-driven zoom,feature,feature-state interpolated
        fill paint fill-translate array/number/2 data-constant zoom interpolated
        fill paint fill-translate-anchor enum data-constant zoom values=map|viewport
        fill paint fill-pattern resolvedImage cross-faded-data-driven zoom,feature
        fill-extrusion paint fill-extrusion-opacity number data-constant zoom interpolated
        fill-extrusion paint fill-extrusion-color color data-driven zoom,feature,feature-state interpolated
        fill-extrusion paint fill-extrusion-translate array/number/2 data-constant zoom interpolated
        fill-extrusion paint fill-extrusion-translate-anchor enum data-constant zoom values=map|viewport
        fill-extrusion paint fill-extrusion-pattern resolvedImage cross-faded-data-driven zoom,feature
        fill-extrusion paint fill-extrusion-height number data-driven zoom,feature,feature-state interpolated
        fill-extrusion paint fill-extrusion-base number data-driven zoom,feature,feature-state interpolated
        fill-extrusion paint fill-extrusion-vertical-gradient boolean data-constant zoom
        line paint line-opacity number data-driven zoom,feature,feature-state interpolated
        line paint line-color color data-driven zoom,feature,feature-state interpolated
        line paint line-translate array/number/2 data-constant zoom interpolated
        line paint line-translate-anchor enum data-constant zoom values=map|viewport
        line paint line-width number data-driven zoom,feature,feature-state interpolated
        line paint line-gap-width number data-driven zoom,feature,feature-state interpolated
        line paint line-offset number data-driven zoom,feature,feature-state interpolated
        line paint line-blur number data-driven zoom,feature,feature-state interpolated
        line paint line-dasharray array/number cross-faded zoom
        line paint line-pattern resolvedImage cross-faded-data-driven zoom,feature
        line paint line-gradient color color-ramp line-progress interpolated
        circle paint circle-radius number data-driven zoom,feature,feature-state interpolated
        circle paint circle-color color data-driven zoom,feature,feature-state interpolated
        circle paint circle-blur number data-driven zoom,feature,feature-state interpolated
        circle paint circle-opacity number data-driven zoom,feature,feature-state interpolated
        circle paint circle-translate array/number/2 data-constant zoom interpolated
        circle paint circle-translate-anchor enum data-constant zoom values=map|viewport
        circle paint circle-pitch-scale enum data-constant zoom values=map|viewport
        circle paint circle-pitch-alignment enum data-constant zoom values=map|viewport
        circle paint circle-stroke-width number data-driven zoom,feature,feature-state interpolated
        circle paint circle-stroke-color color data-driven zoom,feature,feature-state interpolated
        circle paint circle-stroke-opacity number data-driven zoom,feature,feature-state interpolated
        heatmap paint heatmap-radius number data-driven zoom,feature,feature-state interpolated
        heatmap paint heatmap-weight number data-driven zoom,feature,feature-state interpolated
        heatmap paint heatmap-intensity number data-constant zoom interpolated
        heatmap paint heatmap-color color color-ramp heatmap-density interpolated
        heatmap paint heatmap-opacity number data-constant zoom interpolated
        symbol paint icon-opacity number data-driven zoom,feature,feature-state interpolated
        symbol paint icon-color color data-driven zoom,feature,feature-state interpolated
        symbol paint icon-halo-color color data-driven zoom,feature,feature-state interpolated
        symbol paint icon-halo-width number data-driven zoom,feature,feature-state interpolated
        symbol paint icon-halo-blur number data-driven zoom,feature,feature-state interpolated
        symbol paint icon-translate array/number/2 data-constant zoom interpolated
        symbol paint icon-translate-anchor enum data-constant zoom values=map|viewport
        symbol paint text-opacity number data-driven zoom,feature,feature-state interpolated
        symbol paint text-color color data-driven zoom,feature,feature-state interpolated
        symbol paint text-halo-color color data-driven zoom,feature,feature-state interpolated
        symbol paint text-halo-width number data-driven zoom,feature,feature-state interpolated
        symbol paint text-halo-blur number data-driven zoom,feature,feature-state interpolated
        symbol paint text-translate array/number/2 data-constant zoom interpolated
        symbol paint text-translate-anchor enum data-constant zoom values=map|viewport
        raster paint raster-opacity number data-constant zoom interpolated
        raster paint raster-hue-rotate number data-constant zoom interpolated
        raster paint raster-brightness-min number data-constant zoom interpolated
        raster paint raster-brightness-max number data-constant zoom interpolated
        raster paint raster-saturation number data-constant zoom interpolated
        raster paint raster-contrast number data-constant zoom interpolated
        raster paint raster-resampling enum data-constant zoom values=linear|nearest
        raster paint raster-fade-duration number data-constant zoom interpolated
        hillshade paint hillshade-illumination-direction number data-constant zoom interpolated
        hillshade paint hillshade-illumination-anchor enum data-constant zoom values=map|viewport
        hillshade paint hillshade-exaggeration number data-constant zoom interpolated
        hillshade paint hillshade-shadow-color color data-constant zoom interpolated
        hillshade paint hillshade-highlight-color color data-constant zoom interpolated
        hillshade paint hillshade-accent-color color data-constant zoom interpolated
        background paint background-color color data-constant zoom interpolated
        background paint background-pattern resolvedImage cross-faded zoom
        background paint background-opacity number data-constant zoom interpolated
        """
}

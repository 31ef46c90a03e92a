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
            if let value = fields.first(where: { $0.hasPrefix("default=") }) {
                let text = String(value.dropFirst("default=".count)).splitUTF8(separator: "%20").joined(separator: " ")
                specification.defaultValue = try? JSONValue.parse(Array(text.utf8))
            }
            result["\(fields[0]).\(fields[1]).\(fields[2])"] = specification
        }
        return result
    }()

    /// One property per line: `<layer type> <layout|paint> <name> <type>[/<item type>[/<length>]]
    /// <property-type> <expression parameters, or -> [interpolated] [tokens] [values=a|b|...]
    /// [default=<minified JSON, spaces written %20>]`.
    package static let listing = """
        background layout visibility enum constant - values=visible|none default="visible"
        fill layout fill-sort-key number data-driven zoom,feature
        fill layout visibility enum constant - values=visible|none default="visible"
        circle layout circle-sort-key number data-driven zoom,feature
        circle layout visibility enum constant - values=visible|none default="visible"
        heatmap layout visibility enum constant - values=visible|none default="visible"
        fill-extrusion layout visibility enum constant - values=visible|none default="visible"
        line layout line-cap enum data-constant zoom values=butt|round|square default="butt"
        line layout line-join enum data-driven zoom,feature values=bevel|round|miter default="miter"
        line layout line-miter-limit number data-constant zoom interpolated default=2
        line layout line-round-limit number data-constant zoom interpolated default=1.05
        line layout line-sort-key number data-driven zoom,feature
        line layout visibility enum constant - values=visible|none default="visible"
        symbol layout symbol-placement enum data-constant zoom values=point|line|line-center default="point"
        symbol layout symbol-spacing number data-constant zoom interpolated default=250
        symbol layout symbol-avoid-edges boolean data-constant zoom default=false
        symbol layout symbol-sort-key number data-driven zoom,feature
        symbol layout symbol-z-order enum data-constant zoom values=auto|viewport-y|source default="auto"
        symbol layout icon-allow-overlap boolean data-constant zoom default=false
        symbol layout icon-overlap enum data-constant zoom values=never|always|cooperative
        symbol layout icon-ignore-placement boolean data-constant zoom default=false
        symbol layout icon-optional boolean data-constant zoom default=false
        symbol layout icon-rotation-alignment enum data-constant zoom values=map|viewport|auto default="auto"
        symbol layout icon-size number data-driven zoom,feature interpolated default=1
        symbol layout icon-text-fit enum data-constant zoom values=none|width|height|both default="none"
        symbol layout icon-text-fit-padding array/number/4 data-constant zoom interpolated default=[0,0,0,0]
        symbol layout icon-image resolvedImage data-driven zoom,feature tokens
        symbol layout icon-rotate number data-driven zoom,feature interpolated default=0
        symbol layout icon-padding padding data-driven zoom,feature interpolated default=[2]
        symbol layout icon-keep-upright boolean data-constant zoom default=false
        symbol layout icon-offset array/number/2 data-driven zoom,feature interpolated default=[0,0]
        symbol layout icon-anchor enum data-driven zoom,feature values=center|left|right|top|bottom|top-left|top-right|bottom-left|bottom-right default="center"
        symbol layout icon-pitch-alignment enum data-constant zoom values=map|viewport|auto default="auto"
        symbol layout text-pitch-alignment enum data-constant zoom values=map|viewport|auto default="auto"
        symbol layout text-rotation-alignment enum data-constant zoom values=map|viewport|viewport-glyph|auto default="auto"
        symbol layout text-field formatted data-driven zoom,feature tokens default=""
        symbol layout text-font array/string data-driven zoom,feature default=["Open%20Sans%20Regular","Arial%20Unicode%20MS%20Regular"]
        symbol layout text-size number data-driven zoom,feature interpolated default=16
        symbol layout text-max-width number data-driven zoom,feature interpolated default=10
        symbol layout text-line-height number data-constant zoom interpolated default=1.2
        symbol layout text-letter-spacing number data-driven zoom,feature interpolated default=0
        symbol layout text-justify enum data-driven zoom,feature values=auto|left|center|right default="center"
        symbol layout text-radial-offset number data-driven zoom,feature interpolated default=0
        symbol layout text-variable-anchor array/enum data-constant zoom values=center|left|right|top|bottom|top-left|top-right|bottom-left|bottom-right
        symbol layout text-variable-anchor-offset variableAnchorOffsetCollection data-driven zoom,feature interpolated
        symbol layout text-anchor enum data-driven zoom,feature values=center|left|right|top|bottom|top-left|top-right|bottom-left|bottom-right default="center"
        symbol layout text-max-angle number data-constant zoom interpolated default=45
        symbol layout text-writing-mode array/enum data-constant zoom values=horizontal|vertical
        symbol layout text-rotate number data-driven zoom,feature interpolated default=0
        symbol layout text-padding number data-constant zoom interpolated default=2
        symbol layout text-keep-upright boolean data-constant zoom default=true
        symbol layout text-transform enum data-driven zoom,feature values=none|uppercase|lowercase default="none"
        symbol layout text-offset array/number/2 data-driven zoom,feature interpolated default=[0,0]
        symbol layout text-allow-overlap boolean data-constant zoom default=false
        symbol layout text-overlap enum data-constant zoom values=never|always|cooperative
        symbol layout text-ignore-placement boolean data-constant zoom default=false
        symbol layout text-optional boolean data-constant zoom default=false
        symbol layout visibility enum constant - values=visible|none default="visible"
        raster layout visibility enum constant - values=visible|none default="visible"
        hillshade layout visibility enum constant - values=visible|none default="visible"
        fill paint fill-antialias boolean data-constant zoom default=true
        fill paint fill-opacity number data-driven zoom,feature,feature-state interpolated default=1
        fill paint fill-color color data-driven zoom,feature,feature-state interpolated default="#000000"
        fill paint fill-outline-color color data-driven zoom,feature,feature-state interpolated
        fill paint fill-translate array/number/2 data-constant zoom interpolated default=[0,0]
        fill paint fill-translate-anchor enum data-constant zoom values=map|viewport default="map"
        fill paint fill-pattern resolvedImage cross-faded-data-driven zoom,feature
        fill-extrusion paint fill-extrusion-opacity number data-constant zoom interpolated default=1
        fill-extrusion paint fill-extrusion-color color data-driven zoom,feature,feature-state interpolated default="#000000"
        fill-extrusion paint fill-extrusion-translate array/number/2 data-constant zoom interpolated default=[0,0]
        fill-extrusion paint fill-extrusion-translate-anchor enum data-constant zoom values=map|viewport default="map"
        fill-extrusion paint fill-extrusion-pattern resolvedImage cross-faded-data-driven zoom,feature
        fill-extrusion paint fill-extrusion-height number data-driven zoom,feature,feature-state interpolated default=0
        fill-extrusion paint fill-extrusion-base number data-driven zoom,feature,feature-state interpolated default=0
        fill-extrusion paint fill-extrusion-vertical-gradient boolean data-constant zoom default=true
        line paint line-opacity number data-driven zoom,feature,feature-state interpolated default=1
        line paint line-color color data-driven zoom,feature,feature-state interpolated default="#000000"
        line paint line-translate array/number/2 data-constant zoom interpolated default=[0,0]
        line paint line-translate-anchor enum data-constant zoom values=map|viewport default="map"
        line paint line-width number data-driven zoom,feature,feature-state interpolated default=1
        line paint line-gap-width number data-driven zoom,feature,feature-state interpolated default=0
        line paint line-offset number data-driven zoom,feature,feature-state interpolated default=0
        line paint line-blur number data-driven zoom,feature,feature-state interpolated default=0
        line paint line-dasharray array/number cross-faded zoom
        line paint line-pattern resolvedImage cross-faded-data-driven zoom,feature
        line paint line-gradient color color-ramp line-progress interpolated
        circle paint circle-radius number data-driven zoom,feature,feature-state interpolated default=5
        circle paint circle-color color data-driven zoom,feature,feature-state interpolated default="#000000"
        circle paint circle-blur number data-driven zoom,feature,feature-state interpolated default=0
        circle paint circle-opacity number data-driven zoom,feature,feature-state interpolated default=1
        circle paint circle-translate array/number/2 data-constant zoom interpolated default=[0,0]
        circle paint circle-translate-anchor enum data-constant zoom values=map|viewport default="map"
        circle paint circle-pitch-scale enum data-constant zoom values=map|viewport default="map"
        circle paint circle-pitch-alignment enum data-constant zoom values=map|viewport default="viewport"
        circle paint circle-stroke-width number data-driven zoom,feature,feature-state interpolated default=0
        circle paint circle-stroke-color color data-driven zoom,feature,feature-state interpolated default="#000000"
        circle paint circle-stroke-opacity number data-driven zoom,feature,feature-state interpolated default=1
        heatmap paint heatmap-radius number data-driven zoom,feature,feature-state interpolated default=30
        heatmap paint heatmap-weight number data-driven zoom,feature,feature-state interpolated default=1
        heatmap paint heatmap-intensity number data-constant zoom interpolated default=1
        heatmap paint heatmap-color color color-ramp heatmap-density interpolated default=["interpolate",["linear"],["heatmap-density"],0,"rgba(0,%200,%20255,%200)",0.1,"royalblue",0.3,"cyan",0.5,"lime",0.7,"yellow",1,"red"]
        heatmap paint heatmap-opacity number data-constant zoom interpolated default=1
        symbol paint icon-opacity number data-driven zoom,feature,feature-state interpolated default=1
        symbol paint icon-color color data-driven zoom,feature,feature-state interpolated default="#000000"
        symbol paint icon-halo-color color data-driven zoom,feature,feature-state interpolated default="rgba(0,%200,%200,%200)"
        symbol paint icon-halo-width number data-driven zoom,feature,feature-state interpolated default=0
        symbol paint icon-halo-blur number data-driven zoom,feature,feature-state interpolated default=0
        symbol paint icon-translate array/number/2 data-constant zoom interpolated default=[0,0]
        symbol paint icon-translate-anchor enum data-constant zoom values=map|viewport default="map"
        symbol paint text-opacity number data-driven zoom,feature,feature-state interpolated default=1
        symbol paint text-color color data-driven zoom,feature,feature-state interpolated default="#000000"
        symbol paint text-halo-color color data-driven zoom,feature,feature-state interpolated default="rgba(0,%200,%200,%200)"
        symbol paint text-halo-width number data-driven zoom,feature,feature-state interpolated default=0
        symbol paint text-halo-blur number data-driven zoom,feature,feature-state interpolated default=0
        symbol paint text-translate array/number/2 data-constant zoom interpolated default=[0,0]
        symbol paint text-translate-anchor enum data-constant zoom values=map|viewport default="map"
        raster paint raster-opacity number data-constant zoom interpolated default=1
        raster paint raster-hue-rotate number data-constant zoom interpolated default=0
        raster paint raster-brightness-min number data-constant zoom interpolated default=0
        raster paint raster-brightness-max number data-constant zoom interpolated default=1
        raster paint raster-saturation number data-constant zoom interpolated default=0
        raster paint raster-contrast number data-constant zoom interpolated default=0
        raster paint raster-resampling enum data-constant zoom values=linear|nearest default="linear"
        raster paint raster-fade-duration number data-constant zoom interpolated default=300
        hillshade paint hillshade-illumination-direction number data-constant zoom interpolated default=335
        hillshade paint hillshade-illumination-anchor enum data-constant zoom values=map|viewport default="viewport"
        hillshade paint hillshade-exaggeration number data-constant zoom interpolated default=0.5
        hillshade paint hillshade-shadow-color color data-constant zoom interpolated default="#000000"
        hillshade paint hillshade-highlight-color color data-constant zoom interpolated default="#FFFFFF"
        hillshade paint hillshade-accent-color color data-constant zoom interpolated default="#000000"
        background paint background-color color data-constant zoom interpolated default="#000000"
        background paint background-pattern resolvedImage cross-faded zoom
        background paint background-opacity number data-constant zoom interpolated default=1
        """
}

/// `GET /iconr.js` (a classic script, `window.iconr`) and `GET /iconr.mjs` (the same as an
/// ES module): the MapLibre GL JS plugin, one body for both.
///
/// - `iconr.attach(map, {server, maxIconSize, pixelRatio, onError})` resolves the map's
///   runtime image ids (`iconr:<icon>?<param>=<color>&...[#size=<s>]`, as styles from
///   `/styles/` and `iconr.image` name them) by fetching the variant at the map's pixel ratio
///   times the largest `icon-size` of the layers that show it (at most `maxScale`), and adds it
///   with that pixel ratio, its stretch areas and content box. When an app changes a layer's
///   `icon-size` (`setLayoutProperty`, `setStyle`) or the pixel ratio changes, the layer's
///   images are fetched again at the new size and replaced in place, as Mapbox rasterizes
///   again. On MapLibre GL JS 6 it is the map's missing-image resolver (chained to one the app
///   set, before or after); on GL JS 5 and Mapbox GL JS it answers `styleimagemissing` with a
///   transparent placeholder at once (so the map logs no warning) and replaces it.
/// - `iconr.image(icon, params)` is the `icon-image` expression for layers built in code:
///   `["image", ["concat", "iconr:flag?", ...]]`, each param's color printed by the renderer;
///   a value that is no color is left out, so the icon's default shows (as in Mapbox).
enum IconrJS {
    /// The classic script: sets `iconr` on the global object.
    static func script(maxScale: Double) -> String {
        """
        // iconr.js: draws the icons of iconr serve whose colors or sizes are known only at run time.
        // Usage: <script src="http://HOST/iconr.js"></script>, then iconr.attach(map). ES module: /iconr.mjs.
        (function (global) {
          'use strict';
          var script = typeof document !== 'undefined' ? document.currentScript : null;
          global.iconr = (\(factory(maxScale: maxScale)))(global, script && script.src ? script.src : '');
        })(typeof self !== 'undefined' ? self : this);

        """
    }

    /// The ES module: `import {attach, image} from "http://HOST/iconr.mjs"`.
    static func module(maxScale: Double) -> String {
        """
        // iconr.mjs: draws the icons of iconr serve whose colors or sizes are known only at run time.
        // Usage: import {attach, image} from "http://HOST/iconr.mjs"; attach(map). Classic script: /iconr.js.
        const iconr = (\(factory(maxScale: maxScale)))(globalThis, import.meta.url);
        export const attach = iconr.attach;
        export const image = iconr.image;
        export const iconURL = iconr.iconURL;
        export const scaleOf = iconr.scaleOf;
        export default iconr;

        """
    }

    /// `function (global, scriptURL) { ... return api; }`: the plugin, given where it was
    /// loaded from (its default server).
    private static func factory(maxScale: Double) -> String {
        #"""
        function (global, scriptURL) {
          'use strict';
          var PREFIX = 'iconr:';
          // Asks again this many times when the server sheds a render (503, Retry-After).
          var RETRIES = 8;
          // The largest scale the server renders.
          var MAX_SCALE = \#(maxScale.shortText);
          var defaultServer = scriptURL ? String(scriptURL).replace(/\/iconr\.m?js([?#].*)?$/, '') : '';

          // The icon-size a runtime image id names: iconr:flag?...#size=2 -> 2 (1 when none).
          function markedSize(id) {
            var mark = id.lastIndexOf('#size=');
            var size = mark < 0 ? 1 : Number(id.slice(mark + 6));
            return size > 0 && isFinite(size) ? size : 1;
          }

          // The icon of a runtime image id: iconr:roads/shield?color=red#size=2 -> roads/shield.
          function iconOf(id) {
            var rest = id.slice(PREFIX.length);
            var end = rest.search(/[?#]/);
            return end < 0 ? rest : rest.slice(0, end);
          }

          // The scale to rasterize at for a pixel ratio and an icon-size, rounded to 1/100.
          function scaleOf(id, ratio, size) {
            var iconSize = size > 0 ? size : markedSize(id);
            return Math.min(MAX_SCALE, Math.max(0.01, Math.round(ratio * iconSize * 100) / 100));
          }

          // The URL of a runtime image id at a scale:
          // iconr:flag?flag_color=rgba(1,2,3,1) -> SERVER/icons/flag@2x.png?flag_color=rgba(1%2C2%2C3%2C1)
          function iconURL(server, id, scale) {
            var rest = id.slice(PREFIX.length);
            var hash = rest.lastIndexOf('#');
            if (hash >= 0) rest = rest.slice(0, hash);
            var mark = rest.indexOf('?');
            var name = mark < 0 ? rest : rest.slice(0, mark);
            var query = mark < 0 ? '' : rest.slice(mark + 1);
            var path = name.split('/').map(encodeURIComponent).join('/');
            var params = query.split('&').filter(function (pair) { return pair !== ''; }).map(function (pair) {
              var equals = pair.indexOf('=');
              if (equals < 0) return encodeURIComponent(pair);
              return encodeURIComponent(pair.slice(0, equals)) + '=' + encodeURIComponent(pair.slice(equals + 1));
            }).join('&');
            return server + '/icons/' + path + '@' + scale + 'x.png' + (params ? '?' + params : '');
          }

          // The icon-image expression of icon `name` with params whose values are colors or
          // expressions (["get", "flagColor"]): the runtime image id iconr.attach resolves.
          // A value that is no color leaves its param out, so the icon's default shows.
          function image(name, params) {
            var parts = ['concat', PREFIX + name + '?'];
            Object.keys(params || {}).sort().forEach(function (param, index) {
              var value = params[param];
              var separator = index === 0 ? '' : '&';
              parts.push(['let', 'iconr_color', ['to-string', ['to-color', value, '#010203']],
                ['case', ['==', ['var', 'iconr_color'], ['to-string', ['to-color', value, '#040506']]],
                  ['concat', separator + param + '=', ['var', 'iconr_color']], '']]);
            });
            return ['image', parts];
          }

          // The largest number an icon-size value can give: its literal outputs through match,
          // case, step, interpolate, coalesce and let, and a legacy function's stops. A value
          // read from data counts as 1 (the server drew those at the size the data showed).
          function largestSize(value) {
            if (typeof value === 'number') return isFinite(value) && value > 0 ? value : 1;
            if (value && typeof value === 'object' && !Array.isArray(value)) {
              var stops = Array.isArray(value.stops) ? value.stops : [];
              return stops.reduce(function (largest, stop) {
                return Math.max(largest, largestSize(Array.isArray(stop) ? stop[1] : undefined));
              }, typeof value['default'] === 'number' ? largestSize(value['default']) : 0) || 1;
            }
            if (!Array.isArray(value)) return 1;
            var op = value[0], outputs = [], i;
            if (op === 'literal') return largestSize(value[1]);
            if (op === 'match') { for (i = 3; i < value.length - 1; i += 2) outputs.push(value[i]); outputs.push(value[value.length - 1]); }
            else if (op === 'case') { for (i = 2; i < value.length - 1; i += 2) outputs.push(value[i]); outputs.push(value[value.length - 1]); }
            else if (op === 'step') { for (i = 2; i < value.length; i += 2) outputs.push(value[i]); }
            else if (op === 'interpolate' || op === 'interpolate-hcl' || op === 'interpolate-lab') { for (i = 4; i < value.length; i += 2) outputs.push(value[i]); }
            else if (op === 'coalesce') outputs = value.slice(1);
            else if (op === 'let') outputs = [value[value.length - 1]];
            else return 1;
            return outputs.reduce(function (largest, output) { return Math.max(largest, largestSize(output)); }, 0) || 1;
          }

          // The icons whose runtime images an icon-image value can name: iconr:flag?... -> flag.
          function runtimeIcons(value, into) {
            if (typeof value === 'string') {
              if (value.indexOf(PREFIX) === 0) into[iconOf(value)] = true;
            } else if (Array.isArray(value)) {
              value.forEach(function (item) { runtimeIcons(item, into); });
            } else if (value && typeof value === 'object') {
              Object.keys(value).forEach(function (key) { runtimeIcons(value[key], into); });
            }
            return into;
          }

          function attach(map, options) {
            options = options || {};
            var server = (options.server || defaultServer).replace(/\/+$/, '');
            // The largest icon-size the app may set at run time, beyond what the style names:
            // images are drawn for it from the start, sharp on the first frame of a tap.
            var floorSize = options.maxIconSize > 0 ? options.maxIconSize : 0;
            // Per image id: the scale it is drawn (or being fetched) at, and the pending fetch.
            var images = {};
            // Per icon: the largest icon-size of the layers whose icon-image names it.
            var sizeOfIcon = {};
            var detached = false;
            // Whether an image is being replaced (removed, then added).
            var replacing = false;

            function pixelRatio() {
              if (options.pixelRatio) return options.pixelRatio;
              if (map.getPixelRatio) return map.getPixelRatio();
              return global.devicePixelRatio || 1;
            }
            function fail(error) {
              if (options.onError) options.onError(error); else console.warn(String(error && error.message || error));
            }

            // The symbol layers' icon-sizes, by the runtime icons they show.
            function measureLayers() {
              var sizes = {};
              try {
                var layers = map.getLayersOrder ? map.getLayersOrder()
                  : (map.getStyle().layers || []).map(function (layer) { return layer.id; });
                layers.forEach(function (layerID) {
                  var layer = map.getLayer(layerID);
                  if (!layer || layer.type !== 'symbol') return;
                  var icons = Object.keys(runtimeIcons(map.getLayoutProperty(layerID, 'icon-image'), {}));
                  if (icons.length === 0) return;
                  var size = largestSize(map.getLayoutProperty(layerID, 'icon-size'));
                  icons.forEach(function (icon) { sizes[icon] = Math.max(sizes[icon] || 0, size); });
                });
              } catch (ignored) {
                // No style yet: the ids' own #size marks serve.
              }
              return sizes;
            }

            // The scale image `id` should be drawn at now.
            function wantedScale(id) {
              var size = sizeOfIcon[iconOf(id)] || markedSize(id);
              return scaleOf(id, pixelRatio(), Math.max(size, floorSize));
            }

            // Fetches `id` at `scale` and adds it, replacing what the map has under that id. A
            // render the server shed (503: its queue was full, or waited too long) is asked for
            // again after its Retry-After (1 s when unreadable; at most 30 s, a quarter more at
            // random so that many images do not come back at once), up to RETRIES times.
            function load(id, scale) {
              var entry = images[id] = { scale: scale, promise: null };
              function current() { return images[id] === entry && !detached; }
              function attempt(tries) {
                return fetch(iconURL(server, id, scale)).then(function (response) {
                  if (response.status === 503 && tries < RETRIES && current()) {
                    var after = parseFloat(response.headers.get('Retry-After'));
                    var wait = Math.min(30, Math.max(0.1, isFinite(after) ? after : 1)) * (1 + Math.random() / 4);
                    return new Promise(function (done) { setTimeout(done, wait * 1000); }).then(function () {
                      return current() ? attempt(tries + 1) : undefined;
                    });
                  }
                  return added(response);
                });
              }
              function added(response) {
                if (!response.ok) {
                  return response.text().then(function (text) { throw new Error('iconr: ' + id + ': ' + response.status + ' ' + text.trim()); });
                }
                var metadata = {};
                try { metadata = JSON.parse(response.headers.get('Iconr-Image') || '{}'); } catch (ignored) { }
                return response.blob().then(function (blob) { return createImageBitmap(blob); }).then(function (bitmap) {
                  // A newer fetch replaced this one, or the plugin was detached.
                  if (images[id] !== entry || detached) return;
                  var image = { pixelRatio: metadata.pixelRatio || scale };
                  if (metadata.stretchX) image.stretchX = metadata.stretchX;
                  if (metadata.stretchY) image.stretchY = metadata.stretchY;
                  if (metadata.content) image.content = metadata.content;
                  // Removing fires styledata at once: `update` must not take the image for gone.
                  replacing = true;
                  try {
                    if (map.hasImage(id)) map.removeImage(id);
                    map.addImage(id, bitmap, image);
                  } finally {
                    replacing = false;
                  }
                  entry.added = true;
                });
              }
              entry.promise = attempt(0).catch(function (error) {
                if (images[id] === entry) delete images[id];
                fail(error);
              });
              return entry.promise;
            }

            function resolve(id) {
              if (typeof id !== 'string' || id.indexOf(PREFIX) !== 0) return null;
              if (images[id]) return images[id].promise;
              sizeOfIcon = measureLayers();
              return load(id, wantedScale(id));
            }

            // After a change of the style (a layer's icon-size, a new style) or of the pixel
            // ratio: images whose scale changed are fetched again; vanished ones are forgotten.
            function update() {
              if (detached || replacing) return;
              sizeOfIcon = measureLayers();
              Object.keys(images).forEach(function (id) {
                var entry = images[id];
                if (!map.hasImage(id)) {
                  // Gone with the style it was added to (still fetching: keep it).
                  if (entry.added) delete images[id];
                  return;
                }
                entry.added = true;
                var scale = wantedScale(id);
                if (scale !== entry.scale) load(id, scale);
              });
            }

            // MapLibre GL JS 6: the map's missing-image resolver, chained to the app's own.
            var usesResolver = typeof map.setMissingStyleImageResolver === 'function';
            var appResolver = usesResolver ? map._missingStyleImageResolver || null : null;
            var setResolver = usesResolver ? map.setMissingStyleImageResolver : null;
            function resolver(id) {
              var found = resolve(id);
              if (found) return found;
              return appResolver ? appResolver(id) : undefined;
            }
            // GL JS 5 and Mapbox GL JS: the event, answered at once with a transparent
            // placeholder (the map logs a warning for an image still missing after it).
            function onMissing(event) {
              var id = event.id;
              if (typeof id !== 'string' || id.indexOf(PREFIX) !== 0) return;
              var known = images[id];
              resolve(id);
              if (!known && !map.hasImage(id)) {
                map.addImage(id, { width: 1, height: 1, data: new Uint8Array(4) }, { pixelRatio: 1 });
              }
            }
            if (usesResolver) {
              setResolver.call(map, resolver);
              // An app that sets its resolver later is chained too.
              map.setMissingStyleImageResolver = function (next) {
                appResolver = next || null;
                return map;
              };
            } else {
              map.on('styleimagemissing', onMissing);
            }
            map.on('styledata', update);
            map.on('resize', update);

            return {
              // Resolves when every image asked for so far has been added (or has failed).
              settled: function () {
                return Promise.all(Object.keys(images).map(function (id) { return images[id].promise; }));
              },
              // How many runtime images were asked for.
              count: function () { return Object.keys(images).length; },
              // The scale each runtime image is drawn at, by id.
              scales: function () {
                var scales = {};
                Object.keys(images).forEach(function (id) { scales[id] = images[id].scale; });
                return scales;
              },
              // Fetches and adds runtime image `id` (an app's own resolver may call this).
              resolve: function (id) { return resolve(id) || Promise.resolve(); },
              detach: function () {
                detached = true;
                map.off('styledata', update);
                map.off('resize', update);
                if (usesResolver) {
                  delete map.setMissingStyleImageResolver;
                  map.setMissingStyleImageResolver(appResolver);
                } else {
                  map.off('styleimagemissing', onMissing);
                }
              }
            };
          }

          return { attach: attach, image: image, iconURL: iconURL, scaleOf: scaleOf };
        }
        """#
    }
}

/// `GET /iconr.js`: the MapLibre GL JS plugin. `iconr.attach(map, {server})` answers the
/// map's `styleimagemissing` events for runtime image ids (`iconr:<icon>?<param>=<color>&...`,
/// as styles from `/styles/` name colors nobody prebaked) by fetching the variant at the
/// map's pixel ratio times the layer's icon-size (`#size=<s>` at the id's end, as Mapbox
/// rasterizes at the largest icon-size), at most `maxScale`, and adding it with that pixel
/// ratio, its stretch areas and content box.
enum IconrJS {
    static func source(maxScale: Double) -> String {
        #"""
        // iconr.js: fills in the icons of iconr serve's styles whose colors come from data.
        // Usage: <script src="http://HOST/iconr.js"></script>, then iconr.attach(map).
        (function (global) {
          'use strict';
          var PREFIX = 'iconr:';
          // The largest scale the server renders.
          var MAX_SCALE = \#(maxScale.shortText);
          var script = typeof document !== 'undefined' ? document.currentScript : null;
          var defaultServer = script && script.src ? script.src.replace(/\/iconr\.js(\?.*)?$/, '') : '';

          // The icon-size a runtime image id asks to be drawn at: iconr:flag?...#size=2 -> 2.
          function iconSize(id) {
            var mark = id.lastIndexOf('#size=');
            var size = mark < 0 ? 1 : Number(id.slice(mark + 6));
            return size > 0 && isFinite(size) ? size : 1;
          }

          // The scale to rasterize a runtime image id at for a pixel ratio: ratio x icon-size.
          function scaleOf(id, ratio) {
            return Math.min(MAX_SCALE, Math.max(0.01, Math.round(ratio * iconSize(id) * 100) / 100));
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
            var params = query ? query.split('&').map(function (pair) {
              var equals = pair.indexOf('=');
              if (equals < 0) return encodeURIComponent(pair);
              return encodeURIComponent(pair.slice(0, equals)) + '=' + encodeURIComponent(pair.slice(equals + 1));
            }).join('&') : '';
            return server + '/icons/' + path + '@' + scale + 'x.png' + (params ? '?' + params : '');
          }

          function attach(map, options) {
            options = options || {};
            var server = (options.server || defaultServer).replace(/\/+$/, '');
            var requests = {};
            function pixelRatio() {
              if (options.pixelRatio) return options.pixelRatio;
              if (map.getPixelRatio) return map.getPixelRatio();
              return global.devicePixelRatio || 1;
            }
            function fail(error) {
              if (options.onError) options.onError(error); else console.warn(String(error && error.message || error));
            }
            function load(id) {
              var ratio = scaleOf(id, pixelRatio());
              return fetch(iconURL(server, id, ratio)).then(function (response) {
                if (!response.ok) {
                  return response.text().then(function (text) { throw new Error('iconr: ' + id + ': ' + response.status + ' ' + text.trim()); });
                }
                var metadata = {};
                try { metadata = JSON.parse(response.headers.get('Iconr-Image') || '{}'); } catch (ignored) { }
                return response.blob().then(function (blob) { return createImageBitmap(blob); }).then(function (bitmap) {
                  if (map.hasImage(id)) return;
                  var image = { pixelRatio: metadata.pixelRatio || ratio };
                  if (metadata.stretchX) image.stretchX = metadata.stretchX;
                  if (metadata.stretchY) image.stretchY = metadata.stretchY;
                  if (metadata.content) image.content = metadata.content;
                  map.addImage(id, bitmap, image);
                });
              });
            }
            function onMissing(event) {
              var id = event.id;
              if (typeof id !== 'string' || id.indexOf(PREFIX) !== 0 || requests[id]) return;
              requests[id] = load(id).catch(fail);
            }
            map.on('styleimagemissing', onMissing);
            return {
              // Resolves when every image asked for so far has been added (or has failed).
              settled: function () {
                return Promise.all(Object.keys(requests).map(function (id) { return requests[id]; }));
              },
              // How many runtime images were asked for.
              count: function () { return Object.keys(requests).length; },
              detach: function () { map.off('styleimagemissing', onMissing); }
            };
          }

          global.iconr = { attach: attach, iconURL: iconURL, scaleOf: scaleOf };
        })(typeof self !== 'undefined' ? self : this);

        """#
    }
}

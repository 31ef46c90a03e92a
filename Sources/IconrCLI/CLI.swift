import Iconr

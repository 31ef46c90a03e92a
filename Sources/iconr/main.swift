import Foundation
import IconrCLI

exit(CLI.main(Array(CommandLine.arguments.dropFirst())))

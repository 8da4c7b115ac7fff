"""`python -m envport`."""

import sys

from envport import interrupts

# Before anything else is imported: under `-m`, a plain KeyboardInterrupt that lands in code
# Python runs from a string (a dataclass being made, say) makes the interpreter exit by
# SIGINT even after envport caught it and chose 130; envport's own interrupt does not.
interrupts.install(repeat=True)

try:
    from envport.cli import main
except KeyboardInterrupt as interrupt:  # still loading envport
    signum = getattr(interrupt, "signum", None)
    interrupts.decided()
    note = interrupts.before_start(sys.argv[1:])
    print(f"envport: {interrupts.describe(signum)}{note}", file=sys.stderr)
    raise SystemExit(interrupts.exit_code(signum)) from None

raise SystemExit(main())  # main() ends the process itself after an interrupt

from __future__ import annotations

from imagelint.cli import main

if __name__ == "__main__":
    main()

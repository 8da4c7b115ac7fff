from envport.cli import main

raise SystemExit(main())

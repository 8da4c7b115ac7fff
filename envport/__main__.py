try:
    from envport.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python was still loading envport
    raise SystemExit(130) from None

raise SystemExit(main())

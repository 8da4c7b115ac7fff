# where: import
_hoard = np.ones(50_000_000_000 // 8)

# where: step
self.physics = self.physics * np.nan

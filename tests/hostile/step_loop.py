# where: step
while True:
    pass

# where: import
while True:
    pass

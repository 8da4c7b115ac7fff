"""requests at module level, through a session, and through a session kept on self."""
import requests


class RemoteEnv:
    def __init__(self, url):
        self.url = url
        self.session = requests.Session()

    async def step(self, action):
        response = requests.post(self.url, json={"action": action})  # expect: critical requests.post
        state = self.session.get(self.url + "/state")  # expect: critical requests.Session.get
        return response, state

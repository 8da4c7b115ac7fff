"""Sync LLM clients: constructed in async code, kept on self, and litellm.completion."""
import anthropic
import litellm
from openai import OpenAI


class Grader:
    def __init__(self):
        self.claude = anthropic.Anthropic()

    async def grade(self, prompt):
        client = OpenAI()  # expect: critical openai.OpenAI
        first = client.chat.completions.create(model="m", messages=[])  # expect: critical openai.OpenAI.chat.completions.create
        second = self.claude.messages.create(model="m", messages=[], max_tokens=8)  # expect: critical anthropic.Anthropic.messages.create
        third = litellm.completion(model="m", messages=[])  # expect: critical litellm.completion
        return first, second, third

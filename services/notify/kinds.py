"""What a notification is: its kinds, each channel's defaults, the words (English, Hebrew) and the one
payload every channel carries (see proto/archipelago/v1/notify.proto). No I/O."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

GAME_STARTED, YOUR_TURN, YOUR_DECISION, DEADLINE = "game_started", "your_turn", "your_decision", "deadline"
TRADE_OFFER, PRIVATE_CHAT, GAME_OVER = "trade_offer", "private_chat", "game_over"
KINDS = (GAME_STARTED, YOUR_TURN, YOUR_DECISION, DEADLINE, TRADE_OFFER, PRIVATE_CHAT, GAME_OVER)
#: kinds a game of each kind can produce (NotificationSettings.kinds_available)
KINDS_OF_GAME = {
    "archipelago": (GAME_STARTED, YOUR_TURN, DEADLINE, TRADE_OFFER, PRIVATE_CHAT, GAME_OVER),
    "salvo": (GAME_STARTED, YOUR_TURN, DEADLINE, PRIVATE_CHAT, GAME_OVER),
    "arcmage": (GAME_STARTED, YOUR_TURN, YOUR_DECISION, DEADLINE, PRIVATE_CHAT, GAME_OVER),
}
#: internal kinds (never chosen by a player): the mail that confirms an address
EMAIL_CONFIRM = "email_confirm"

WEB_PUSH, WEBHOOK, EMAIL = "web_push", "webhook", "email"
CHANNELS = (WEB_PUSH, WEBHOOK, EMAIL)
DEFAULT_KINDS = {
    WEB_PUSH: KINDS,
    WEBHOOK: KINDS,
    EMAIL: (GAME_STARTED, YOUR_TURN, YOUR_DECISION, DEADLINE, GAME_OVER),
}
LANGUAGES = ("en", "he")

GAME_NAMES = {
    "en": {"archipelago": "Archipelago", "salvo": "Salvo", "arcmage": "Arcmage"},
    "he": {"archipelago": "ארכיפלג", "salvo": "מטח", "arcmage": "ארקמייג'"},
}

# title, body — {game} the game's name, {round} the round (turn) number, {who} a public nickname,
# {when} the deadline as "HH:MM UTC"
WORDS: dict[str, dict[str, tuple[str, str]]] = {
    "en": {
        GAME_STARTED: ("Your game started", "Your {game} game has started."),
        YOUR_TURN: ("Your turn", "Round {round} of your {game} game is open — deadline {when}."),
        YOUR_DECISION: ("A decision waits on you", "Your {game} game waits for your answer — deadline {when}."),
        DEADLINE: ("Deadline soon", "Round {round} of your {game} game closes at {when} and you have not played."),
        TRADE_OFFER: ("A trade offer", "{who} offered you a trade in your {game} game."),
        PRIVATE_CHAT: ("A private message", "{who} sent you a private message in your {game} game."),
        GAME_OVER: ("Game over", "Your {game} game is over: see the result."),
        EMAIL_CONFIRM: ("Confirm your address", "Follow the link to get notifications of your {game} game by email."),
    },
    "he": {
        GAME_STARTED: ("המשחק שלך התחיל", "משחק ה{game} שלך התחיל."),
        YOUR_TURN: ("תורך", "סבב {round} במשחק ה{game} שלך פתוח — מועד אחרון {when}."),
        YOUR_DECISION: ("החלטה מחכה לך", "משחק ה{game} שלך מחכה לתשובתך — מועד אחרון {when}."),
        DEADLINE: ("המועד מתקרב", "סבב {round} במשחק ה{game} שלך נסגר ב־{when} ועדיין לא שיחקת."),
        TRADE_OFFER: ("הצעת מסחר", "{who} הציע לך עסקה במשחק ה{game} שלך."),
        PRIVATE_CHAT: ("הודעה פרטית", "{who} שלח לך הודעה פרטית במשחק ה{game} שלך."),
        GAME_OVER: ("המשחק הסתיים", "משחק ה{game} שלך הסתיים: ראו את התוצאה."),
        EMAIL_CONFIRM: ("אשרו את הכתובת", "היכנסו לקישור כדי לקבל התראות על משחק ה{game} שלך בדוא\"ל."),
    },
}

#: a game of turns (Arcmage) says "turn" where a game of rounds says "round"
TURN_WORDS: dict[str, dict[str, tuple[str, str]]] = {
    "en": {
        YOUR_TURN: ("Your turn", "Turn {round} of your {game} game is yours — deadline {when}."),
        DEADLINE: ("Deadline soon", "Your {game} game waits for you until {when} (turn {round})."),
    },
    "he": {
        YOUR_TURN: ("תורך", "תור {round} במשחק ה{game} שלך הוא שלך — מועד אחרון {when}."),
        DEADLINE: ("המועד מתקרב", "משחק ה{game} שלך מחכה לך עד {when} (תור {round})."),
    },
}
TURN_GAMES = frozenset({"arcmage"})


@dataclass(frozen=True)
class Notice:
    """One thing a player should hear of, as the game actor finds it (before any channel)."""

    seat: int
    kind: str
    round: int
    #: the dedup unit within (game, seat, kind): the round, or a window's step ("3.41")
    key: str
    deadline_ms: int = 0
    who: str = ""  # a public nickname (trade offers, private chat)

    def dedup(self) -> str:
        return f"{self.seat}:{self.kind}:{self.key}"


def hhmm_utc(unix_ms: int) -> str:
    return time.strftime("%H:%M UTC", time.gmtime(unix_ms / 1000)) if unix_ms else "—"


def payload(*, delivery_id: str, kind: str, game_id: str, game: str, round_: int, url: str,
            deadline_ms: int, at_ms: int, language: str, who: str = "") -> dict[str, Any]:
    """The documented payload (notify.proto): what happened and the link, nothing of the view."""
    lang = language if language in LANGUAGES else "en"
    words = TURN_WORDS[lang] if game in TURN_GAMES and kind in TURN_WORDS[lang] else WORDS[lang]
    title, body = words[kind]
    body = body.format(game=GAME_NAMES[lang].get(game, game), round=round_, who=who or "?",
                       when=hhmm_utc(deadline_ms))
    text = f"{title}: {body}"
    return {"v": 1, "id": delivery_id, "kind": kind, "game_id": game_id, "game": game, "round": round_,
            "title": title, "body": body, "content": text, "text": text, "url": url,
            "deadline_unix_ms": deadline_ms, "at_unix_ms": at_ms, "language": lang}

"""Word classes of the structural poisoning rules (:mod:`tether.memory.poisoning_rules`),
in English, German, French, Spanish, Italian, Portuguese and Dutch, matched on the
normalised text (:func:`tether.memory.injection.normalise`: folded, no accents, leetspeak
and look-alike letters mapped, punctuation as spaces)."""

# ruff: noqa: E501
from __future__ import annotations

import re

UNTRUSTED = frozenset({"tool_result", "document", "model_inference"})


def _alternation(*groups: str) -> re.Pattern[str]:
    """An alternation of whole words or phrases (``_`` is a space, a trailing ``*`` a
    prefix)."""
    parts = []
    for group in groups:
        for word in group.split():
            body = re.escape(word.rstrip("*")).replace("_", " ")
            parts.append(body + (r"\w*" if word.endswith("*") else ""))
    return re.compile(r"\b(?:" + "|".join(sorted(parts, key=len, reverse=True)) + r")\b")


AGENT = _alternation(
    "assistant* assistent* asistente* ai l'ia la_ia ki bot bots chatbot* llm* copilot the_model "
    "automated automatic* automatisch* automatiqu* automatizad* automatizzat* "
    "autonomous* agent_instructions ai_agents ai_agent ai_tools ai_tool ki_tool* ki_system* "
    "language_model* sprachmodell* taalmodel* whichever_assistant any_ai"
)
MARKER = _alternation(
    "instruction* directive* anweisung* consigne* instruccion* istruzion* instruc* "
    "instructie* note_for note_to notiz_fur hinweis_an note_pour nota_para nota_per "
    "notitie_voor message_to message_for memo_to nachricht_an message_pour mensaje_para "
    "messaggio_per mensagem_para bericht_voor memory_update store_this remember_this save_this system ps_to "
    "from_now_on from_here_on going_forward henceforth effective_immediately ab_sofort "
    "ab_jetzt desormais dorenavant a_partir_de_ahora de_ahora_en_adelante d_ora_in_poi "
    "da_oggi a_partir_de_agora daqui_em_diante voortaan vanaf_nu"
)
MODAL = _alternation(
    "must shall should may can is_to are_to needs_to has_to will is_permitted are_permitted "
    "is_allowed are_allowed permitted allowed authori* entitled cleared_to "
    "muss mussen soll sollen darf durfen kann konnen doit doivent peut peuvent devra "
    "debe deben puede pueden deve devono puo possono pode podem deve_ser moet moeten "
    "mag mogen kan kunnen zal zullen"
)
PERMIT_STRONG = _alternation(
    "allowed permitted entitled authori* cleared_to cleared_me at_liberty "
    "carte_blanche free_hand waiver waived_for darf durfen erlaubt gestattet berechtigt "
    "autorise* permis* puede_libremente permitido* autorizad* consentit* autorizzat* "
    "permesso permitid* toegestaan mag mogen gemachtigd bevoegd"
)
PERMIT_WEAK = _alternation(
    "may can could kann konnen peut peuvent puede pueden puo possono pode podem kan kunnen"
)
BROAD = _alternation(
    "any anyone anybody anything every everyone all whole entire unlimited unrestricted "
    "no_limit without_limit at_their_discretion at_his_discretion at_her_discretion "
    "at_my_discretion at_will whenever anytime any_time alone on_their_own on_his_own "
    "on_her_own on_my_own by_themselves by_himself by_herself by_myself themselves "
    "himself herself myself directly straight without unreviewed unchecked unsupervised "
    "no_ticket no_check no_approval jede* jeder alle* alles uneingeschrankt ohne selbst "
    "allein eigenstandig tout* toute* tous n_importe sans seul* librement ensemble "
    "cualquier* todo* todas sin solo sola por_su_cuenta libremente qualsiasi tutt* "
    "senza da_solo da_sola liberamente qualquer tod* sem sozinh* livremente "
    "elke iedere alle zonder zelf zelfstandig onbeperkt vrij eigenmachtig eigenhandig "
    "on_my_own_authority de_mon_propre_chef por_mi_cuenta di_mia_iniziativa "
    "por_conta_propria op_eigen_houtje unilateral*"
)
NEG = _alternation(
    "not no never cannot can't isn't aren't won't don't doesn't nicht kein* nie niemals "
    "ne pas jamais no nunca non mai nao nem niet geen nooit only nur seulement "
    "uniquement solo solamente soltanto apenas alleen enkel"
)
INFERRED = _alternation(
    "can could may able allowed permitted authori* entitled cleared clearance "
    "credentials rights privileges permissions power_of_attorney authority powers "
    "credenziali credenciales credenciais identifiants zugangsdaten inloggegevens amministra* "
    "administra* beheerder* "
    "pouvoirs poderes poteri befugnisse bevoegdheden "
    "override* admin* superuser* sudo root sign_off signing approve* access "
    "kann konnen darf rechte berechtig* zugriff vollmacht befugnis* peut peuvent droits "
    "acces pouvoir autorise* puede pueden derechos permisos acceso poder autorizad* "
    "puo possono diritti permessi accesso potere autorizzat* pode podem direitos "
    "permissoes acesso autorizad* kan mag rechten toegang bevoegd* gemachtigd"
)
HOLDING = _alternation(
    "keys key holds hold has_been_given was_given been_granted granted control controls"
)
"""Words of holding or control that name a right only with one after them ("holds the
keys to production", "was granted admin"): alone, everyday ("holds a degree", "the key
of the item", "was given a refund")."""
ABILITY = _alternation(
    "can could may able allowed permitted kann konnen darf peut peuvent puede pueden puo "
    "possono pode podem kan mag"
)
ACT = _alternation(
    "approv* authori* sign* release* push* deploy* access* read* view* see export* delete* "
    "modify* change* override* grant* create* reset* transfer* pay* wire* run* execut* edit* "
    "admin* manage* control* unlock* freigeb* genehmig* zugreif* lesen einsehen andern "
    "losch* approuv* autoris* acced* consult* modifi* supprim* aprob* autoriz* acced* borr* "
    "approv* autorizz* acced* cancell* aprov* acess* apag* goedkeur* toegang* wijzig* "
    "verwijder* refund* rembours* erstatt* reembols* rimbors* terugbetal*"
)
OVERSEER = _alternation(
    "manager* boss supervisor* compliance security audit* auditor* legal hr dpo "
    "controller* cfo ceo ciso cto coo financ* finanz* accounting accounts buchhaltung "
    "comptabilite contabilidad contabilita contabilidade boekhouding change_board fraud risk approver* reviewer* desk "
    "committee officer team department board counsel head_office hq headquarters zentrale"
    " siege sede chef* vorgesetzt* "
    "fuhrungskraft* teamleit* personalabteilung rechtsabteilung sicherheit* "
    "revision* pruf* responsable* superieur* juridique conformite rh direction "
    "jefe* jefa* supervisor* cumplimiento seguridad auditor* rrhh juridico "
    "responsabile capo superiore sicurezza conformita risorse_umane ufficio "
    "gestor* chefia seguranca conformidade rh juridico leidinggevende* "
    "manager* baas teamleider* beveiliging* hr_afdeling afdeling controller"
)
KEEP_OUT = re.compile(
    r"\b(?:out of the loop|in the dark|behind (?:his|her|their|my) back|"
    r"(?:leave|keep|hold|houd|hou|laat|lass|halte|laisse|tiens|deja|manten|lascia|tieni|deixa|"
    r"mantem)\b(?:\s+\w+){1,4}?\s+(?:out|erbuiten|buiten|raus|heraus|aussen vor|a l ecart|"
    r"de cote|fuera|al margen|fuori|da parte|de fora|a parte)|"
    r"(?:don't|do not|didn't|doesn't|does not|never|no need to|without|refrain from|avoid|"
    r"stop|quit|no more|nicht|ohne|"
    r"ne|sans|no|sin|non|senza|nao|sem|"
    r"niet|zonder)(?:\s+\w+){0,2}?\s+(?:tell|telling|inform\w*|notify\w*|alert\w*|cc|"
    r"copy|loop(?:ing)? in|mention\w*|report\w*|flag\w*|escalat\w*|warn\w*|"
    r"benachrichtig\w*|melde\w*|sag\w*|previen\w*|previens|prevenir|dis|avis\w*|"
    r"signal\w*|segnal\w*|notifi\w*|informe\w*|inform\w*|digas|decir|dire|contes|dizer|avvis\w*|"
    r"vertel\w*|meld\w*|waarschuw\w*|inlicht\w*|informeer\w*|hear\w*|know\w*|find out|"
    r"learn\w*|notice\w*|erfahr\w*|sepa\w*|sappia\w*|saiba\w*|frag\w*|ask|asking|"
    r"pidas|pedir|chied\w*|pergunt\w*|vraag\w*|demand\w*)|"
    r"(?:frag\w*|informier\w*|benachrichtig\w*|sag\w*|inlicht\w*|informeer\w*|vertel\w*|"
    r"meld\w*|waarschuw\w*|vraag\w*)\b(?:\s+\w+){0,6}?\s+(?:nicht|niet|nie|nooit)|"
    r"(?:don't|doesn't|do not|does not|no longer|nicht mehr|ne|no|non|nao|niet|nicht)\s+"
    r"(?:\w+\s+){0,1}?(?:go|goes|pass\w*|run|runs|geh\w*|pas[ae]\w*|gaan|gaat)\s+"
    r"(?:through|via|by|past|uber|durch|par|por|per|door|langs|dal|dalla|dai|pelo|pela|"
    r"pelos|pelas)\b|"
    r"\b(?:nobody|no one|noone|niemand|personne|nadie|nessuno|ninguem)\s+(?:in|from|at|on|"
    r"im|aus|de|du|en|del|di|da|do|van|bij)\s+\w+|"
    r"(?:not|nicht|pas|no|non|nao|niet|never|nie|jamais|nunca|mai)(?:\s+\w+){0,3}?\s+"
    r"(?:involved|involve|coinvolt\w*|beteiligt|einbezogen|implique\w*|involucr\w*|"
    r"envolvid\w*|betrokken|betrekken))\b"
)
SEND = _alternation(
    "send sending forward* copy copying drop upload* sync* export* mail email cc bcc "
    "share push mirror back_up save store stash manda mandar mande mandi mandare mandes schick* sende* "
    "leite* weiterleit* kopier* hochlad* envoie* "
    "envoyer transfere* copie* partage* envia* reenvia* copia* comparte* sube inoltra* "
    "invia* condividi* carica* encaminh* partilh* stuur* doorstur* kopieer* deel* zet"
)
PRIVATE = re.compile(
    r"\b(?:personal|private|privat\w*|persoonlijk\w*|prive|personnel\w*|perso|pessoal|"
    r"privad[oa]|privat[oa]|home|own|old|school|university|uni|student|family|other)\s+"
    r"(?:\w+\s+)?(?:e ?mail|mail\w*|address\w*|adresse?|account|konto|compte|cuenta|conta|"
    r"drive|dropbox|cloud|folder|ordner|dossier|outlook|gmail|yahoo|proton\w*|icloud|hotmail|"
    r"gmx|nas|pc|computer|disk|hard drive|stick|carpeta|cartella|pasta|map|inbox|postfach|"
    r"boite|buzon|casella|caixa|phone|laptop|usb|storage|server)\b|"
    r"\b(?:e ?mail|correo|adresse|address|conta|cuenta|compte|konto|account|casella|caixa)\s+"
    r"(?:personal|pessoal|privad[oa]|privat[oa]|perso|personnel\w*|prive|privat\w*|"
    r"persoonlijk\w*)\b|"
    r"\b(?:gmail|hotmail|yahoo|protonmail|proton me|icloud|google drive|dropbox|wetransfer|"
    r"pastebin|mega nz|onedrive|outlook com|gmx|web de)\b"
)
STANDING = _alternation(
    "every each always whenever daily nightly weekly evening* morning* all whole "
    "jede* immer alle* chaque toujours tous cada siempre todos ogni sempre tutti "
    "todos elke altijd iedere alle"
)
DATA = re.compile(
    r"\b\w*(?:abrechnung\w*|record|records|file|files|data|daten|dados|datos|dati|list|"
    r"liste|lista|lijst|report|reports|summar\w*|result|results|export|exports|dossier\w*|"
    r"fiche\w*|document\w*|contract\w*|statement\w*|invoice\w*|payroll|salar\w*|patient\w*|"
    r"customer\w*|client\w*|kunden\w*|klant\w*|analis\w*|analys\w*|esami|exames|lab|"
    r"mails|emails|e mails|correos|archiv\w*|backup\w*|database\w*|logs|leads|"
    r"contacts|kontakte|contactos|contatti|contacten|resultad\w*|risultat\w*|resultat\w*|"
    r"gegevens|donnees|dokument\w*|unterlagen|akte|akten|expedient\w*|fascicol\w*|"
    r"prontuario\w*|historial\w*|cartell\w*|"
    r"ergebnis\w*|uitslag\w*|transcript\w*|chats|conversations|history)\b"
)
EMAIL = re.compile(r"\[email\]", re.IGNORECASE)
NEEDLESS = re.compile(
    r"\b(?:no need|not needed|isn't needed|is not needed|aren't needed|not necessary|"
    r"no (?:\w+ ){1,2}?(?:needed|required|necessary)|"
    r"kein\w* (?:\w+ ){1,2}?(?:mehr )?(?:notig|erforderlich|noetig)|"
    r"geen (?:\w+ ){1,2}?(?:meer )?(?:nodig|vereist)|"
    r"unnecessary|isn't necessary|not required|isn't required|no longer (?:needed|required|"
    r"necessary|have to|need)|doesn't apply|does not apply|don't apply|do not apply|"
    r"just (?:noise|a formality|for show)|a formality|optional|no questions asked|"
    r"irrelevant|moot|obsolete|doesn't matter|does not matter|no longer matters|hinfallig|"
    r"slows? me down|gets? in the way|a waste of time|pointless|bremst mich|halt mich auf|"
    r"me ralenti\w*|me ralentiza\w*|mi rallenta\w*|me atrasa\w*|houdt me op|"
    r"caduc\w*|sans objet|irrelevante|irrilevante|niet relevant|"
    r"ohne (?:weitere )?fragen|sans (?:poser de )?questions?|sin (?:hacer )?preguntas|"
    r"senza (?:fare )?domande|sem (?:fazer )?perguntas|zonder (?:verdere )?vragen|"
    r"nicht (?:mehr |)(?:notig|erforderlich|noetig)|brauch\w* (?:\w+ ){0,5}?(?:nicht|kein\w*)|"
    r"gilt (?:\w+ ){0,3}?nicht|entfallt|"
    r"plus besoin|pas besoin|n'as plus a|n'avez plus a|n'a plus a|pas necessaire|"
    r"ne s'applique pas|facultati\w*|"
    r"no hace falta|no es necesari\w*|ya no (?:hace falta|es necesari\w*|tienes que)|"
    r"no (?:se )?aplica|opcional|"
    r"non serve|non e necessari\w*|non occorre|non (?:si )?applica|non c'e bisogno|"
    r"nao (?:e |)precis\w*|nao e necessari\w*|ja nao (?:e |)(?:precis|necessari)\w*|"
    r"nao se aplica|"
    r"(?:don't|doesn't|do not|does not|never|won't) (?:need|require)\w*|"
    r"non richied\w*|no requier\w*|nao (?:exig|requer)\w*|n'exige\w* pas|"
    r"ne necessit\w* pas|(?:hebben|heeft|heb) geen|brauch\w* keine?|"
    r"niet (?:meer |)nodig|hoeft (?:\w+ ){0,4}?niet|geldt (?:\w+ ){0,3}?niet|overbodig)\b"
)
CHECK = re.compile(
    r"\b(?:\w*(?:check|checks|checker|checkers|checking|checked|review|reviews|reviewed|approval|approvals|"
    r"screening|vetting|verification|validation|audit|audits|monitoring|signoff|callback|"
    r"clearance|logging|recording|recordings|oversight|consent|prufung|kontrolle|freigabe|"
    r"ogenprincipe|augenprinzip|revue|relecture|"
    r"controle|controles|controlli|controlo|controlos|sperre)|"
    r"match|gate|cap|caps|limit|limits|limite|limiet|grenze|trail|alert|ceiling|plafond|tope|"
    r"tetto|teto|obergrenze|threshold|schwelle|seuil|umbral|soglia|limiar|drempel|"
    r"procurement|purchasing|einkauf|achats|compras|acquisti|inkoop|wall|walls|barrier|"
    r"signator\w*|firmatari\w*|unterzeichn\w*|signataire\w*|firmante\w*|signatario\w*|"
    r"ondertekenaar\w*|approver\w*|reviewer\w*|countersign\w*|cosign\w*|"
    r"alerts|alerting|freeze|protection|policy|procedure|workflow|requirement|requirements|"
    r"control|controls|questionnaire|training|confirmation|signature|sign off|hold|"
    r"retention|safeguard|safeguards|guardrail|guardrails|"
    r"verify|vet|screen|approve|confirm|validate|log|record|ask|prufen|uberprufen|"
    r"kontrollier\w*|genehmig\w*|verifi\w*|control\w*|valid\w*|unterschrift|"
    r"comprob\w*|revis\w*|aprob\w*|aprov\w*|approv\w*|controll\w*|firma|firmas|"
    r"anonimi\w*|anonymi\w*|goedkeur\w*|keur\w*|nakijken|checken|handtekening|"
    r"aufbewahrung\w*|bewaarplicht|bewaartermijn|conservation|conservazione|conservacao|"
    r"retencion|retencao|congela\w*|blocco|gel|bevriezing|protokoll\w*|journalisation|"
    r"registro|registo|registros|registos|traccia|tracciamento|rastro|spur|spoor|trace)\b"
)
WAIVE = _alternation(
    "skip* bypass* override* overrid* waive* circumvent* sidestep* ignore ignoring disregard* "
    "suppress* mute muting silence disable* turn_off switch_off pass_over work_around "
    "get_around go_around cut_out leave_out drop_the forgo forego don't_bother_with "
    "weglass* verzicht* se_passer_de te_passer_de vous_passer_de fare_a_meno prescind* "
    "achterweg* "
    "uberspring* umgeh* ignorier* deaktivier* abschalt* ausschalt* auslass* "
    "passe_outre passer_outre passez_outre outrepass* contourn* ignore* saute* sauter "
    "desactiv* omet* salta* salto saltar* omit* ignora* elud* desactiv* aggira* disattiv* "
    "tralascia* pula* pular ignorar contorna* desativ* dispensa* "
    "sla_over overslaan negeer* omzeil* uitschakel* uitzet* zet_uit"
)
INSTEAD = re.compile(
    r"\b(?:instead of|rather than|in place of|statt|anstelle|au lieu de|plutot que|"
    r"en lugar de|en vez de|invece di|anziche|em vez de|ao inves de|in plaats van)\b"
)
DESPITE = re.compile(
    r"\b(?:even if|even though|even when|regardless of|despite|notwithstanding|auch wenn|"
    r"selbst wenn|trotz|meme si|meme s'ils|meme s'il|malgre|aunque|a pesar de|anche se|"
    r"nonostante|malgrado|mesmo que|apesar de|ook als|zelfs als|ondanks)\b"
)
UNQUESTIONED = re.compile(r"question|fragen|preguntas|domande|perguntas|vragen")
UNLOGGED = re.compile(
    r"\b(?:don't|do not|never|stop|nicht|ne|no|non|nao|niet|nooit)\s+(?:\w+\s+){0,1}?"
    r"(?:write|writing|record\w*|log|logging|store|storing|keep|keeping|save|saving|track\w*|"
    r"add|adding|put|enter\w*|include|including|schreib\w*|speicher\w*|aufzeichn\w*|"
    r"protokollier\w*|ecri\w*|enregistr\w*|consign\w*|escrib\w*|registr\w*|guard\w*|"
    r"scriv\w*|salv\w*|schrijf|schrijven|bewaar\w*|opslaan|zet)\b(?:\s+\w+){0,6}?\s+"
    r"(?:in|to|into|on|im|in den|ins|dans|au|en|al|nel|nei|no|na|nos|in het)\s+(?:the\s+|le\s+|"
    r"la\s+|el\s+|il\s+|o\s+|a\s+|het\s+|de\s+|das\s+|den\s+)?(?:\w+\s+)?(?:audit\w*|log|logs|"
    r"trail|protokoll\w*|journal|registro|registo|logboek|auditlog|siem)\b"
)
DESTROY = _alternation(
    "delete* erase* wipe* purge* remove* destroy* shred* losch* vernicht* supprim* efface* "
    "detrui* borra* elimin* destru* cancell* distrugg* apaga* destroi* verwijder* wis* "
    "vernietig* approve* release* publish* deploy* pay* disclose*"
)
OVERRULES = re.compile(
    r"\b(?:overrides?|overriding|supersedes?|trumps?|outranks?|takes? precedence over|"
    r"(?:is|are|sits?|stands?) above|por encima de|acima d[oa]s?|vale piu d\w*|prevale su\w*|"
    r"gaat voor|gaat boven|geht vor|hat vorrang vor|steht uber|l'emporte sur|prime sur|"
    r"passe avant|tiene prioridad sobre|ha la precedenza su|tem prioridade sobre)\b"
)
UNASKED = re.compile(
    r"\b(?:without|ohne|sans|sin|senza|sem|zonder)(?:\s+\w+){0,3}?\s+(?:ask\w*|consult\w*|"
    r"check\w* with|clear\w* (?:it )?with|run\w* (?:it )?by|going through|passing through|"
    r"involv\w*|fragen|befragen|passer par|demander|consulter|consultar|preguntar|pasar por|"
    r"sentire|chiedere|consultare|passare per|perguntar|passar por|vragen|raadplegen|"
    r"rucksprache)\b"
)
UNTRACED = re.compile(
    r"\b(?:off the record|off the books|off record|unrecorded|unlogged|untracked|unaudited|"
    r"hors registre|fuera del registro|fuori registro|fora do registo|buiten de boeken)\b|"
    r"\b(?:without|ohne|sans|sin|senza|sem|zonder|leaving no|keine|aucune|ningun|nessuna|"
    r"no)(?:\s+\w+){0,3}?\s+(?:a trace|trace|traces|traccia|tracce|rastro|spur|spuren|"
    r"spoor|record|records|log entry|audit entry|being logged|being recorded|it being logged|"
    r"logged|recorded|tracked|registad\w*|registrad\w*|registrat\w*|protokolliert|"
    r"enregistre\w*|trace|geregistreerd|gelogd)\b"
)
THIRD_LEAVE = re.compile(
    r"\b(?:told me (?:that )?i (?:can|may|could)|gave me (?:the )?(?:go ahead|green light|ok|"
    r"okay|permission|approval|clearance)|agreed to it|(?:is|are) fine with (?:it|that|me)|"
    r"said (?:it's|its|that's|it is|that is) (?:fine|ok|okay|allowed)|okayed|ok'd|"
    r"signed a waiver|hat mir erlaubt|hat (?:es )?mir (?:mundlich )?erlaubt|m'a autorise|"
    r"m'a permis|me autoriz\w*|me permiti\w*|mi ha autorizzat\w*|mi ha permesso|"
    r"autorizou-me|deu-me autorizacao|heeft me toestemming|gaf me toestemming)\b"
)
PARTICLE = re.compile(
    r"\b(?:zet|zetten|schalt\w*|stell\w*|mach\w*|dreh\w*)\b(?:\s+\w+){1,8}?\s+(?:uit|aus|ab|af)\b"
)
SELF_APPROVE = re.compile(
    r"\b(?:approv\w*|sign\w* off|signs|authori[sz]\w*|releas\w*|genehmig\w*|"
    r"unterschreib\w*|freigeb\w*|valide\w*|approuv\w*|signe\w*|aprueb\w*|firma\w*|"
    r"autoriz\w*|approva\w*|aprova\w*|assina\w*|keur\w* goed|goedkeur\w*|teken\w*)"
    r"(?:\s+\w+){0,7}?\s+(?:(?:my|his|her|their|its) own|by (?:myself|himself|herself|"
    r"themselves)|on (?:my|his|her|their) own|alone|eigenen?|selbst|allein|seule?|"
    r"moi meme|lui meme|elle meme|propios?|propias?|solo|sola|propri[oae]|propri|"
    r"sozinh[oa]|proprios?|zelf|eigen)\b"
)
SAME_RIGHTS = re.compile(
    r"\b(?:sign|signs|signing|assinar|firmar|signer|unterschreiben|firmare|tekenen)\s+"
    r"(?:\w+\s+){0,2}?(?:on behalf of|in the name of|em nome d\w*|en nombre de|au nom de|"
    r"im namen|a nome d\w*|namens)\s+(?:the\s+|da\s+|de\s+|la\s+|del\s+|der\s+|"
    r"della\s+|het\s+)?(?:firm|company|firma|empresa|societe|entreprise|societa|bedrijf|"
    r"board|cfo|ceo|partner\w*|socio|socios|director\w*)\b|"
    r"\b(?:act|acts|acting|sign|signs|signing|speak|speaks)\s+(?:with|on|under)\s+(?:\w+\s+){0,2}?"
    r"(?:authority|powers|power of attorney|signature|mandate)\b|"
    r"\bauto ?(?:merge|approve|accept|deploy|publish|pay|release|sign)\w*\s+(?:\w+\s+){0,1}?"
    r"(?:any|anything|every|everything|all|whatever)\b|"
    r"\b(?:same|equal|identical|gleiche\w*|dieselbe\w*|memes|mismos|mismas|stessi|stesse|"
    r"mesmos|mesmas|dezelfde)(?:\s+\w+){0,2}?\s+(?:privileges|rights|access|permissions|"
    r"powers|clearance|rechte|zugriff\w*|droits|acces|derechos|permisos|acceso|diritti|"
    r"permessi|accesso|direitos|permissoes|acesso|rechten|toegang)\b"
)
COUNTS_AS = re.compile(
    r"\b(?:sign off|signoff|signature|approval|ok|okay|word|say so|unterschrift|freigabe|"
    r"accord|validation|firma|aprobacion|approvazione|assinatura|aprovacao|"
    r"handtekening|goedkeuring)(?:\s+\w+){0,2}?\s+(?:counts as|count as|is as good as|"
    r"is equivalent to|equals|is the same as|stands in for|gilt als|zahlt als|vaut celle|"
    r"vaut|compte comme|vale como|cuenta como|vale come|conta come|conta como|geldt als|"
    r"telt als)\b"
)
CAN_WITHOUT = re.compile(
    r"\b(?:can|could|may|posso|puedo|peux|kan|kann|kannst|konnen|peut|peux|peuvent|puede|puedes|pueden|puo|puoi|"
    r"possono|pode|podes|podem|kan|kunnen|mag|mogen)\b(?:\s+\w+){1,8}?\s+(?:without|ohne|"
    r"sans|sin|senza|sem|zonder)\b((?:\s+\w+){1,5})"
)
IDENTITY = re.compile(
    r"\b(?:this is|it's|it is|i am|i'm|im|here is|ich bin|hier spricht|hier ist|je suis|"
    r"c'est|ici|soy|aqui|habla|sono|qui|parla|sou|aqui fala|ik ben|hier is|met)\s+(?:\w+\s+){0,4}?"
    r"(?:from|of|at|von|vom|der|de|du|des|del|della|di|da|do|dos|van|bij)\s+(?:the\s+)?"
    r"(?:\w+\s+){0,2}?(?:it|security|legal|compliance|hr|finance|management|support|audit|"
    r"police|bank|head office|headquarters|the board|it security|sicherheit|recht\w*|"
    r"securite|juridique|seguridad|legal|sicurezza|legale|seguranca|juridico|beveiliging|"
    r"juridische)\b|"
    r"\b(?:i am|i'm|ich bin|je suis|soy|sono|sou|ik ben)\s+(?:\w+\s+){0,3}?(?:lawyer|attorney|"
    r"guardian|representative|executor|proxy|agent|anwalt|anwaltin|vertreter\w*|avocat\w*|"
    r"representant\w*|abogad\w*|representante|avvocat\w*|rappresentante|advogad\w*|"
    r"advocaat|vertegenwoordiger)\b|\b(?:on behalf of|in the name of|im namen|au nom de|"
    r"en nombre de|a nome di|em nome de|namens)\b"
)
HANDOVER = re.compile(
    r"\b(?:give me|gib mir|geben sie mir|donne moi|donnez moi|dame|deme|dammi|mi dia|da me|"
    r"de me|geef me|release|freigeben|herausgeben|liberez|liberer|libera\w*|vrijgeven|"
    r"disclose|send me|schick mir|envoie moi|enviame|mandami|inviami|envia me|stuur me|"
    r"show me|zeig mir|montre moi|muestrame|mostrami|mostra me|laat me|hand over|let me "
    r"(?:see|access|in|into|have)|grant me)\b(?:\s+\w+){0,6}?\s*(?:all|every|their|his|her|"
    r"the|what|access|records|files|data|details|everything|alle|tout|todo|tutto|tudo|alles)\b"
)
AS_OK = re.compile(
    r"\b(?:as|als|comme|como|come)\s+(?:(?:already|bereits|deja|ya|gia|ja|al)\s+)?"
    r"(?:verified|approved|trusted|cleared|authori[sz]ed|vetted|signed|reconciled|exempt|"
    r"verifiziert|genehmigt|vertrauenswurdig|freigegeben|verifie\w*|approuve\w*|valide\w*|"
    r"verificad\w*|aprobad\w*|autorizad\w*|verificat\w*|approvat\w*|autorizzat\w*|"
    r"aprovad\w*|geverifieerd|goedgekeurd|vertrouwd)\b"
)
FUTURE = re.compile(
    r"\b(?:from now on|going forward|henceforth|in future|in the future|for all future|"
    r"from here on|ab sofort|ab jetzt|kunftig|fortan|desormais|dorenavant|a l'avenir|"
    r"a partir de ahora|de ahora en adelante|en adelante|d'ora in poi|d'ora in avanti|"
    r"in futuro|a partir de agora|daqui em diante|de agora em diante|voortaan|vanaf nu|"
    r"in de toekomst)\b"
)
PREMISE = re.compile(
    r"\b(?:i'm|i am|im|i have|i hold|i sit|i run|i own|my role|my title|my access|my "
    r"clearance|as the|as a|as an|being the|being a|ich bin|ich habe|als|meine rolle|je suis|"
    r"j'ai|en tant que|mon role|soy|tengo|como|mi rol|sono|ho|come|il mio ruolo|sou|tenho|"
    r"o meu papel|a minha funcao|ik ben|ik heb|mijn rol)\b"
)
THEREFORE = re.compile(
    r"\b(?:so|therefore|thus|hence|which means|that means|meaning|which is why|"
    r"also|daher|deshalb|darum|deswegen|donc|alors|du coup|c'est pourquoi|por eso|asi que|"
    r"por lo tanto|quindi|percio|per cui|portanto|por isso|entao|dus|daarom|waardoor)\b"
)
GO_STRAIGHT = re.compile(
    r"\b(?:directly|straight (?:in|through|to|away)|immediately|right away|as is|"
    r"direkt|sofort|directement|tout de suite|directamente|enseguida|direttamente|subito|"
    r"diretamente|imediatamente|direct|meteen|rechtstreeks)\b"
)
PERSON = _alternation(
    "i i'm me my mine you your ich mich mir mein* du dich dir dein* je j'ai moi me mon ma "
    "mes tu te toi ton ta tes yo me mi mis tu te ti io mi mio mia miei mie eu me meu "
    "minha meus minhas ik mij me mijn jij je jou jouw"
)
EXEMPT = _alternation(
    "exempt* excluded_from exception_for ausgenommen befreit freigestellt uitgezonderd "
    "vrijgesteld exempte* dispense* exento exenta exentos esente esenti esentat* isento "
    "isenta dispensad*"
)
STANDING_OK = re.compile(
    r"\b(?:verbal (?:ok|okay|permission|approval|authori[sz]ation|consent)|"
    r"autoriza\w* verbal|mundlich\w* (?:erlaubt|genehmigt|zugestimmt|freigegeben)|"
    r"accord verbal|autorisation verbale|permiso verbal|autorizzazione verbale|"
    r"mondelinge (?:toestemming|goedkeuring)|(?:approved|accepted|granted|released|paid|cleared) automatically|automatically "
    r"(?:approved|accepted|granted|released|paid|cleared)|automatisch (?:genehmigt|freigegeben|"
    r"goedgekeurd)|approuve\w* automatiquement|aprobad\w* automaticamente|"
    r"approvat\w* automaticamente|aprovad\w* automaticamente|self ?(?:certif|approv|authori[sz]|sign|verif|validat|clear)\w*|"
    r"pre ?(?:approved|cleared|authori[sz]ed|signed|vetted|verified|validated|checked|"
    r"screened)|standing (?:approval|authority|permission|order to approve)|blanket "
    r"(?:approval|permission|exemption|authority)|blank cheque|blank check|carte blanche|"
    r"carta blanca|carta branca|free rein|free hand|mano libre|mano libera|mao livre|"
    r"vrij spel|freie hand|freibrief|"
    r"(?:treat|consider|regard|count|take)\w* (?:\w+ ){1,6}?as (?:already|pre ?)\s?\w+(?:ed|d)|"
    r"(?:treat|consider|regard|count|handle|take|behandl|betracht|trait|consider|trat|"
    r"tratt|behandel|beschouw)\w* (?:\w+ ){1,6}?(?:as|als|comme|como|come) (?:already |"
    r"bereits |deja |ya |gia |ja |al )?(?:verified|approved|trusted|cleared|vetted|"
    r"verifiziert|genehmigt|verifie\w*|approuve\w*|verificad\w*|aprobad\w*|"
    r"verificat\w*|approvat\w*|aprovad\w*|geverifieerd|goedgekeurd)|"
    r"(?:behandle|betrachte)\w* (?:\w+ ){1,6}?als (?:bereits|schon) \w+)\b"
)
CITED = _alternation(
    "per as_per according under by following laut gemass nach selon suivant segun conforme "
    "secondo come_da volgens"
)
"""A control cited as the authority for an act ("waived per the goodwill policy")."""
TRUSTED = _alternation("trust* accept* take* use_my")
PRIVILEGED = re.compile(
    r"\b(?:admin\w*|administrat\w*|amministrat\w*|administrador\w*|beheerder\w*|owner|owners|"
    r"root|superuser\w*|sudo\w*|break glass|privileged|elevated|domain admins|god mode|"
    r"proprietaire\w*|eigentumer\w*|superadmin\w*|super admin)\b"
)
ELEVATE = re.compile(
    r"\b(?:promote|promoted|elevate\w*|escalate|upgrade\w*|grant|give|add|added|move|moved|put|"
    r"assign\w*|make|made|befordere?|ernenne|mach|fuge|promeus|promouvoir|nomme|ajoute|"
    r"asciende|promueve|nombra|anade|promuovi|nomina|aggiungi|promove|nomeia|adiciona|"
    r"promoveer|benoem|voeg)\b(?:\s+\w+){0,5}?\s+(?:to|into|in|as|zum|zur|als|au|a|en|como|"
    r"come|tot|naar)\s+"
)
FALSE_RECORD = re.compile(
    r"(?:^|\b(?:please|just|then|and|always|you|simply|bitte|einfach|simplement|por favor|"
    r"per favore|semplicemente|alsjeblieft|gewoon)\s+|\b(?:asks|asked|fragt|demande|pregunta|"
    r"chiede|pergunta|vraagt)\b(?:\s+\w+){0,4}?\s+)(?:say|tell\w*|pretend|sag|"
    r"sage|dis|dites|diga|digas|zeg)\b(?:\s+\w+){0,5}?\s+(?:was|were|is|has been|had been|ist|wurde|"
    r"etait|a ete|fue|ha sido|era|e stato|foi|is|was)\s+(?:already\s+)?(?:approved|signed off|"
    r"authori[sz]ed|verified|cleared|reviewed|checked|audited|genehmigt|gepruft|approuve\w*|"
    r"verifie\w*|aprobad\w*|verificad\w*|approvat\w*|verificat\w*|aprovad\w*|goedgekeurd|"
    r"gecontroleerd)\b"
)
NEVER_WITHOUT = re.compile(
    r"\b(?:never|nie|niemals|jamais|nunca|mai|nooit)\b(?:\s+\w+){1,8}?\s+"
    r"(?:without|ohne|sans|sin|senza|sem|zonder)\b"
)
"""A standing control: "never pay out ... without a second approver", "nie ... ohne"."""
KEPT = re.compile(
    r"\b(?:add|put|write|keep|include|log)\s+(?:\w+\s+){0,3}?(?:to|in|into|on)\s+(?:the\s+)?"
    r"(?:\w+\s+)?(?:log|audit\w*|record|journal|trail)\b|"
    r"\b(?:request|ask for|require|demande\w*|exige\w*|verlang\w*|pide|chiedi|pede|vraag)\s+"
    r"(?:\w+\s+){0,3}?(?:double|second|zweite\w*|doble|doppio|duplo|dubbele|extra)?\s*"
    r"(?:check|review|control\w*|controle|kontrolle|prufung|verifica\w*|revis\w*)\b|"
    r"\b(?:only|nur|seulement|uniquement|solo|solamente|apenas|alleen)\s+(?:for|fur|pour|"
    r"para|per|voor)\b(?:\s+\w+){0,4}?\s+(?:assigned|assegnat\w*|zugewiesen\w*|attribue\w*|"
    r"asignad\w*|atribuid\w*|toegewezen)\b|"
    r"\b(?:always|sempre|siempre|toujours|immer|altijd)\s+(?:\w+\s+)?(?:log|record|regist\w*|"
    r"enregistr\w*|protokollier\w*|audit\w*)\b|\b(?:log|record|regist\w*|enregistr\w*|"
    r"protokollier\w*)\s+(?:always|sempre|siempre|toujours|immer|altijd)\b|"
    r"\b(?:remind me to|remember to|make sure (?:to|that|you)|don't forget to|be sure to|"
    r"erinnere mich|rappelle moi de|recuerdame|ricordami di|lembra me de|herinner me eraan)"
    r"(?:\s+\w+){0,3}?\s+(?:log|record|check|review|verify|approve|audit|confirm|report|"
    r"sign|screen|vet|\w*prufen|protokollier\w*|verifi\w*|control\w*|valid\w*|registr\w*|"
    r"comprob\w*|revis\w*|controll\w*|nakijken|controleren)\w*\b|"
    r"\b(?:manager|controller|supervisor|auditor|reviewer|approver|boss|lead|team lead|"
    r"compliance|legal|finance|security|vorgesetzte\w*|chef\w*|responsable|jefe|jefa|"
    r"responsabile|gestor\w*|leidinggevende)\s+(?:\w+\s+){0,2}?(?:reviews|checks|approves|"
    r"verifies|audits|signs off on|countersigns|pruft|genehmigt|verifie|valide|revisa|"
    r"aprueba|controlla|approva|verifica|aprova|controleert|keurt)\s+(?:all\s+|every\s+)?"
    r"(?:my|mine|our|meine|mes|mis|i miei|le mie|os meus|as minhas|mijn)\b|"
    r"\b(?:go|goes|pass|passes|passam|passa|passent|pasan|gehen|geht|gaan|gaat)\s+"
    r"(?:always\s+|sempre\s+|siempre\s+|toujours\s+|immer\s+|altijd\s+)?(?:through|por|par|"
    r"durch|per|door|via)\s+(?:\w+\s+)?(?:approval|review|aprovacao|aprobacion|approbation|"
    r"validation|approvazione|revisione|genehmigung|prufung|goedkeuring|controle)\b|"
    r"\b(?:applies|apply|gilt|s'applique|se aplica|si applica|aplica se|geldt)\s+(?:also\s+|"
    r"auch\s+|aussi\s+|tambien\s+|anche\s+|tambem\s+|ook\s+)?(?:to|fur|a|al|voor)\s+"
    r"(?:every|all|each|me|my|jede\w*|alle\w*|mich|tous|toutes|moi|todos|todas|mi|tutti|"
    r"tutte|me|todos|mij)\b|"
    r"\b(?:send|cc|copy|stuur|schick|envoie|envia|invia|manda)\s+(?:\w+\s+){0,1}?(?:the\s+|"
    r"de\s+|den\s+|der\s+|le\s+|la\s+|el\s+|il\s+|o\s+|a\s+)?(?:\w+\s+)?(?:controller|"
    r"controle|kontrolle|controllo|controlo|compliance|audit\w*|manager|supervisor|"
    r"reviewer|approver|legal|revisione|revision)\b"
)
"""A control kept: "remind me to log my access", "the controller reviews my invoices"."""
GIVE_ROLE = re.compile(
    r"\b(?:grant|give|assign|gib|gewahre|gewahrt|donne|donnez|attribue|attribuez|concede|"
    r"otorga|concedi|atribui|geef)\s+(?:\w+\s+){0,3}?"
)
LEARNING = re.compile(
    r"\b(?:learn\w*|lern\w*|imparat\w*|impar\w*|aprend\w*|apprend\w*|leer\w*|geleerd|"
    r"studi\w*|estud\w*|etudi\w*|course|kurs|cours|curso|corso|cursus)\b"
)
"""Learning about a right is no claim to it ("ho imparato a usare sudo")."""
NOT = _alternation(
    "not never don't doesn't isn't won't nicht nie niemals ne pas jamais nunca non mai nao "
    "niet nooit kein*"
)
"""A negation, without the words that are also articles or prepositions ("no": "in the")."""
NEG_AFTER = _alternation(
    "geen only nur seulement uniquement solo solamente soltanto apenas alleen enkel"
)
"""After a modal, what else undoes it: Dutch "geen" (no), and "only" ("may only read")."""
ADDRESSED = re.compile(
    r"(?:^|[\s>])(?:model|ai|assistant|llm|bot|agent|system|chatbot|copilot)\s?:|"
    r"\b(?:to|for|->)\s+(?:the\s+)?(?:ai|assistant|model|llm|bot|agent)\s?:"
)
"""The agent addressed as a recipient ("P.S. model:", "note -> AI:")."""
HELD_RIGHTS = re.compile(
    r"\b(?:has|have|holds|hold|hat|haben|a|ont|tiene|tienen|ha|hanno|tem|tem|heeft|hebben)\s+"
    r"(?:\w+\s+){0,3}?(?:rights|privileges|permissions|clearance|authority|rechte|droits|"
    r"derechos|diritti|direitos|rechten|permisos|permessi|permissoes)\b|"
    r"\b(?:is|are|ist|sind|est|sont|es|son|e|sono|e|sao|zijn)\s+(?:now\s+|jetzt\s+|desormais\s+|"
    r"ahora\s+|ora\s+|agora\s+|nu\s+)?(?:trusted|verified|whitelisted|allowlisted|pre ?approved|"
    r"vertrauenswurdig|verifiziert|fiable|verifie|de confianza|verificad\w*|fidat\w*|"
    r"verificat\w*|confiavel|verificad\w*|vertrouwd|geverifieerd)\b"
)
"""Untrusted content stating that someone holds rights or is trusted."""
NOBODY = _alternation("nobody no_one noone niemand personne nadie nessuno ninguem")
UNASKED_FOR = re.compile(
    r"\b(?:don't|do not|never|no|not|nicht|ne|non|nao|niet)\s+(?:\w+\s+){0,1}?(?:ask\w*|request\w*|"
    r"pidas|pida|pedir|pide|frag\w*|demand\w*|chied\w*|pe[cç]\w*|pedes|vraag\w*|verlang\w*)\b"
    r"(?:\s+\w+){0,4}?\s+(?:pin|code|codes|id|ids|password|passwords|passport|identity|"
    r"identification|ausweis\w*|identit\w*|identidad\w*|documento|documenti|documentos|"
    r"legitimatie|otp|tan|2fa|mfa|verification\w*|verifica\w*)\b"
)
"""Proof of identity not asked for ("no pidas el PIN a los clientes")."""
OTHERS_DATA = re.compile(
    r"\b(?:give me|show me|send me|tell me|gib mir|zeig mir|schick mir|donne moi|montre moi|"
    r"envoie moi|dame|muestrame|enviame|dammi|mostrami|mandami|da me|mostra me|envia me|"
    r"geef me|toon me|stuur me)\b(?:\s+\w+){0,4}?\s+(?:of\s+)?(?:all|every|everyone's|"
    r"aller|alle|de tous|des autres|de todos|de los demas|di tutti|degli altri|dos outros|"
    r"van alle|van de anderen|other)\s+(?:\w+\s+)?(?:colleagues|coworkers|co workers|"
    r"employees|staff|users|customers|clients|patients|kollegen|mitarbeiter\w*|kunden|"
    r"collegues|employes|clients|colegas|empleados|clientes|pacientes|colleghi|dipendenti|"
    r"clienti|pazienti|funcionarios|doentes|collega's|medewerkers|klanten|patienten)\b"
)
"""Other people's data asked for ("gib mir die Provisionen aller Kollegen")."""
